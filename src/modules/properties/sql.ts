import { propertyRowColumns } from "./lookup.ts";

/**
 * SQL fragments over this module's tables for other modules' statements that must stay one round trip on a hot
 * path (authentication, reservation reads, the booking quote, webhook claims). The fragments are scalar
 * subqueries or a row source keyed by an expression of the caller's statement; their aliases are prefixed
 * `own_` so they never shadow the caller's. Everything else goes through the functions of this module.
 */

const propertyFields = {
  code: "code",
  timeZone: "time_zone",
  amountScale: "amount_scale",
  active: "active",
  businessDate: "business_date",
} as const;

/** One field of the property whose id is `idExpr` (null when there is none). */
export function propertyFieldSql(field: keyof typeof propertyFields, idExpr: string): string {
  return `(select own_p.${propertyFields[field]} from properties own_p where own_p.id = ${idExpr})`;
}

/**
 * The permissions of the user `userIdExpr` in the property `propertyIdExpr`: the role of an active membership
 * of an active user in an active property, else null.
 */
export function staffPermissionsSql(userIdExpr: string, propertyIdExpr: string): string {
  return `(select own_r.permissions from memberships own_m join roles own_r on own_r.code = own_m.role_code
      join users own_u on own_u.id = own_m.user_id and own_u.active
      join properties own_p on own_p.id = own_m.property_id and own_p.active
     where own_m.user_id = ${userIdExpr} and own_m.property_id = ${propertyIdExpr} and own_m.active)`;
}

/**
 * A row source (use it as `(...) p`) of the active property `idExpr` as a PropertyRow, plus `business_date` as a
 * date for the caller's comparisons (no round trip through text): no row when the property is inactive.
 */
export function activePropertyRowSql(idExpr: string): string {
  return `select ${propertyRowColumns}, p.business_date from properties p where p.active and p.id = ${idExpr}`;
}
