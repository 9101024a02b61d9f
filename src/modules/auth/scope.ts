import type { ContextValues } from "@connectrpc/connect";
import type pg from "pg";
import { AppError } from "../../errors.ts";
import { poolQueryable } from "../../db/queryable.ts";
import { isUuid } from "../../lib/ids.ts";
import { findPropertyByCode, findPropertyById } from "../properties/index.ts";
import { principalKey, type Principal } from "./principal.ts";

/** The stable facts of a property most calls need (no business date: it moves every night). */
export interface PropertyRef {
  id: string;
  code: string;
  name: string;
  timeZone: string;
  currency: string;
  amountScale: number;
  sandbox: boolean;
}

/** The caller of the current RPC (set by the auth interceptor); `unauthorized` when there is none. */
export function requirePrincipal(values: ContextValues): Principal {
  const principal = values.get(principalKey);
  if (principal === undefined) throw new AppError("unauthorized", "Authentication required.");
  return principal;
}

/** A staff session's caller (`forbidden` for machine clients; the method's AuthRule normally excludes them already). */
export function requireStaff(values: ContextValues): Extract<Principal, { kind: "staff" }> {
  const principal = requirePrincipal(values);
  if (principal.kind !== "staff") throw new AppError("forbidden", "Staff sessions only.");
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

const TTL_MS = 60_000;
const caches = new WeakMap<pg.Pool, Map<string, { ref: PropertyRef; at: number }>>();

/**
 * Resolves a property by id or code that the caller may reach, else `not_found`: a property of someone else
 * looks exactly like one that does not exist (no existence leak, never 403). Repositories then filter every
 * query by the returned id. Cached per process for a minute (these fields practically never change).
 */
export async function requireProperty(
  db: { pool: pg.Pool },
  principal: Principal,
  propertyIdOrCode: string,
): Promise<PropertyRef> {
  let cache = caches.get(db.pool);
  if (cache === undefined) caches.set(db.pool, (cache = new Map()));
  const key = isUuid(propertyIdOrCode) ? propertyIdOrCode.toLowerCase() : propertyIdOrCode;
  let hit = cache.get(key);
  if (hit === undefined || performance.now() - hit.at > TTL_MS) {
    const q = poolQueryable(db.pool);
    const found =
      key === "" || key.length > 64
        ? undefined
        : isUuid(key)
          ? await findPropertyById(q, key)
          : await findPropertyByCode(q, key);
    const ref: PropertyRef | undefined =
      found === undefined
        ? undefined
        : {
            id: found.id,
            code: found.code,
            name: found.name,
            timeZone: found.timeZone,
            currency: found.currency,
            amountScale: found.amountScale,
            sandbox: found.sandbox,
          };
    if (ref !== undefined) {
      hit = { ref, at: performance.now() };
      if (cache.size > 10_000) cache.clear();
      cache.set(ref.id, hit);
      cache.set(ref.code, hit);
    } else {
      hit = undefined;
    }
  }
  if (hit === undefined || !principal.propertyIds.includes(hit.ref.id))
    throw new AppError("not_found", "No such property.");
  return hit.ref;
}
