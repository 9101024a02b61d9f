/**
 * Row sources over domain_events for the webhook sender's one-statement claims (use them as `(...) e`): the
 * events stay this module's table, read with the columns a delivery needs.
 */
const columns = "own_e.id, own_e.property_id, own_e.type, own_e.occurred_at, own_e.data, own_e.created_at";

/** The event `idExpr` of property `propertyIdExpr` (no row when there is none). */
export function domainEventSql(idExpr: string, propertyIdExpr: string): string {
  return `select ${columns} from domain_events own_e where own_e.id = ${idExpr} and own_e.property_id = ${propertyIdExpr}`;
}

/** The events whose ids are in the uuid array `idsExpr`. */
export function domainEventsByIdsSql(idsExpr: string): string {
  return `select ${columns} from domain_events own_e where own_e.id = any(${idsExpr})`;
}
