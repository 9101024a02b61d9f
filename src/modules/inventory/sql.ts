/**
 * SQL fragments over this module's tables for other modules' statements that must stay one round trip (the
 * reservation reads, the change feed, reports): scalar subqueries keyed by expressions of the caller's statement,
 * with `own_` aliases so they never shadow the caller's. Everything else goes through this module's functions.
 */

/** The code of the room type `idExpr` of property `propertyIdExpr`. */
export function roomTypeCodeSql(propertyIdExpr: string, idExpr: string): string {
  return `(select own_rt.code from room_types own_rt where own_rt.property_id = ${propertyIdExpr} and own_rt.id = ${idExpr})`;
}

/** The code of the rate plan `idExpr` of property `propertyIdExpr`. */
export function ratePlanCodeSql(propertyIdExpr: string, idExpr: string): string {
  return `(select own_rp.code from rate_plans own_rp where own_rp.property_id = ${propertyIdExpr} and own_rp.id = ${idExpr})`;
}

/** The number of the room `idExpr` of property `propertyIdExpr` (null when `idExpr` is null). */
export function roomNumberSql(propertyIdExpr: string, idExpr: string): string {
  return `(select own_rm.number from rooms own_rm where own_rm.property_id = ${propertyIdExpr} and own_rm.id = ${idExpr})`;
}
