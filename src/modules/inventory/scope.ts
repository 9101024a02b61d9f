import type { HandlerContext } from "@connectrpc/connect";
import type pg from "pg";
import { AppError } from "../../errors.ts";
import { principalKey, type Principal } from "../auth/principal.ts";
import { poolQueryable, propertyInReach, type PropertyRow } from "./queryable.ts";

/** The caller of an RPC (set by the auth interceptor); none means the call is unauthenticated. */
export function principalOf(ctx: HandlerContext): Principal {
  const principal = ctx.values.get(principalKey);
  if (principal === undefined) throw new AppError("unauthorized", "Authentication required.", { headers: { "www-authenticate": "Bearer" } });
  return principal;
}

/**
 * Whether the caller holds a staff permission. Machine clients hold it through the same name as a scope, and
 * internal clients with the operator scope `admin` hold every permission.
 */
export function holds(principal: Principal, permission: string): boolean {
  if (principal.kind === "staff") return principal.permissions.has(permission);
  return principal.scopes.has(permission) || (principal.kind === "internal" && principal.scopes.has("admin"));
}

/**
 * The property an RPC names by code, if the caller reaches it: staff sessions reach their active property,
 * clients their granted properties. Anything else is 404 (no existence leak).
 */
export async function scopedProperty(pool: pg.Pool, ctx: HandlerContext, propertyCode: string): Promise<{ principal: Principal; property: PropertyRow }> {
  const principal = principalOf(ctx);
  const reach = principal.kind === "staff" ? [principal.activePropertyId] : principal.propertyIds;
  const property = await propertyInReach(poolQueryable(pool), propertyCode, reach);
  return { principal, property };
}
