/**
 * Row sources over domain_events and partner_events for the webhook sender's one-statement claims (use them as
 * `(...) e`): the events stay this module's tables, read with the columns a delivery needs. `client_id` is null
 * for a domain event (every subscribed address of the property) and the client for a partner event.
 */
const columns = "own_e.id, own_e.property_id, own_e.type, own_e.occurred_at, own_e.data, own_e.created_at";

/** The event `idExpr` of property `propertyIdExpr`, domain or partner (no row when there is none). */
export function domainEventSql(idExpr: string, propertyIdExpr: string): string {
  return `select ${columns} from domain_events own_e where own_e.id = ${idExpr} and own_e.property_id = ${propertyIdExpr}
    union all select ${columns} from partner_events own_e where own_e.id = ${idExpr} and own_e.property_id = ${propertyIdExpr}`;
}

/** The domain events whose ids are in the uuid array `idsExpr`. */
export function domainEventsByIdsSql(idsExpr: string): string {
  return `select ${columns} from domain_events own_e where own_e.id = any(${idsExpr})`;
}

/** The partner events whose ids are in the uuid array `idsExpr`, with their `client_id`. */
export function partnerEventsByIdsSql(idsExpr: string): string {
  return `select ${columns}, own_e.client_id from partner_events own_e where own_e.id = any(${idsExpr})`;
}
