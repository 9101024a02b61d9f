import type pg from "pg";
import type { Queryable, Statement } from "../../db/queryable.ts";
import { propertyFieldSql } from "../properties/index.ts";

export type ClientKind = "partner" | "internal";

export interface ApiClient {
  id: string;
  kind: ClientKind;
  provider: string;
  name: string;
  scopes: string[];
  environment: "test" | "live";
  active: boolean;
  createdAt: Date;
  approvedAt: Date | null;
  /** Codes of the granted properties (active or not). */
  propertyCodes: string[];
}

/** What authentication needs: the hash and the ids of the granted properties that are active. */
export interface ClientCredentials {
  id: string;
  kind: ClientKind;
  provider: string;
  environment: "test" | "live";
  scopes: string[];
  active: boolean;
  secretHash: string;
  propertyIds: string[];
}

export async function insertClient(
  db: Queryable,
  c: { id: string; kind: ClientKind; provider: string; name: string; secretHash: string; scopes: string[]; now: Date },
): Promise<void> {
  await db.query(
    `insert into api_clients (id, kind, provider, name, secret_hash, scopes, created_at) values ($1, $2, $3, $4, $5, $6::text[], $7)`,
    [c.id, c.kind, c.provider, c.name, c.secretHash, c.scopes, c.now],
  );
}

export async function grantProperties(db: Queryable, clientId: string, propertyIds: readonly string[]): Promise<void> {
  if (propertyIds.length === 0) return;
  await db.query(
    `insert into api_client_properties (client_id, property_id) select $1, unnest($2::uuid[]) on conflict do nothing`,
    [clientId, [...propertyIds]],
  );
}

const clientColumns = `c.id, c.kind, c.provider, c.name, c.scopes, c.environment, c.active, c.created_at as "createdAt", c.approved_at as "approvedAt",
  coalesce((select array_agg(x.code order by x.code) from (select ${propertyFieldSql("code", "cp.property_id")} as code
    from api_client_properties cp where cp.client_id = c.id) x), '{}') as "propertyCodes"`;

export async function findClient(db: Queryable, id: string): Promise<ApiClient | undefined> {
  const rows = await db.query<ApiClient>(`select ${clientColumns} from api_clients c where c.id = $1`, [id]);
  return rows[0];
}

/** Clients newest first, `limit` of them after the cursor's row (keyset on created_at, id). */
export async function listClients(
  db: Queryable,
  page: { limit: number; after?: { at: Date; id: string } | undefined },
): Promise<ApiClient[]> {
  return db.query<ApiClient>(
    `select ${clientColumns} from api_clients c
     where $1::timestamptz is null or (c.created_at, c.id) < ($1, $2)
     order by c.created_at desc, c.id desc limit $3`,
    [page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
}

/**
 * Active clients granted each of the properties (partner clients) that already reach `max`: the codes of those
 * properties. Callers hold the creation lock (lockClientCreation) so two creates cannot both pass.
 */
export async function propertiesAtClientCap(
  db: Queryable,
  propertyIds: readonly string[],
  max: number,
): Promise<string[]> {
  if (propertyIds.length === 0) return [];
  const rows = await db.query<{ code: string }>(
    `select ${propertyFieldSql("code", "cp.property_id")} as code from api_client_properties cp
     join api_clients c on c.id = cp.client_id
     where cp.property_id = any($1::uuid[]) and c.active group by cp.property_id having count(*) >= $2`,
    [[...propertyIds], max],
  );
  return rows.map((r) => r.code);
}

/** Active internal clients (they have no property). */
export async function activeInternalClients(db: Queryable): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `select count(*)::int as n from api_clients where kind = 'internal' and active`,
  );
  return rows[0]?.n ?? 0;
}

/** Serializes client creation (rare), so the count caps hold under concurrent creates. */
export async function lockClientCreation(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_xact_lock(hashtext('api_clients_create'))`);
}

/** A partner client granted one property, as the panel's API access page lists it. */
export interface PropertyClient {
  id: string;
  provider: string;
  name: string;
  scopes: string[];
  environment: "test" | "live";
  createdAt: Date;
  approvedAt: Date | null;
  lastTokenAt: Date | null;
}

/** Active partner clients granted the property, newest first, `limit` of them after the cursor's row. */
export async function listPropertyClients(
  pool: pg.Pool,
  propertyId: string,
  page: { limit: number; after?: { at: Date; id: string } | undefined },
): Promise<PropertyClient[]> {
  const { rows } = await pool.query<PropertyClient>(
    `select c.id, c.provider, c.name, c.scopes, c.environment, c.created_at as "createdAt", c.approved_at as "approvedAt", c.last_token_at as "lastTokenAt"
     from api_clients c join api_client_properties cp on cp.client_id = c.id
     where cp.property_id = $1 and c.kind = 'partner' and c.active
       and ($2::timestamptz is null or (c.created_at, c.id) < ($2, $3))
     order by c.created_at desc, c.id desc limit $4`,
    [propertyId, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}

/** Marks the client approved for live writes; false when there is no such client. */
export async function approveClient(db: Queryable, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `update api_clients set environment = 'live', approved_at = coalesce(approved_at, $1) where id = $2 returning id`,
    [now, id],
  );
  return rows.length > 0;
}

/** One indexed query: the client row and its active granted properties. */
/** When the client last got a token (shown on the panel's API access page). */
export async function markTokenIssued(pool: pg.Pool, id: string, now: Date): Promise<void> {
  await pool.query("update api_clients set last_token_at = $2 where id = $1", [id, now]);
}

export const clientCredentials: Statement = {
  name: "auth_client",
  text: `select c.id, c.kind, c.provider, c.environment, c.scopes, c.active, c.secret_hash as "secretHash",
  coalesce((select array_agg(cp.property_id) from api_client_properties cp
    where cp.client_id = c.id and ${propertyFieldSql("active", "cp.property_id")}), '{}') as "propertyIds"
  from api_clients c where c.id = $1`,
};

const clientLimitColumns = { requests: "rate_limit_per_minute", tokens: "token_requests_per_minute" } as const;

/**
 * The client's own per-minute limit (null: the default applies) as a scalar subquery, for the rate limiters'
 * one-statement count on every partner call: `requests` for API calls, `tokens` for the token endpoint.
 */
export function clientLimitSql(limit: keyof typeof clientLimitColumns, clientIdExpr: string): string {
  return `(select own_c.${clientLimitColumns[limit]} from api_clients own_c where own_c.id = ${clientIdExpr})`;
}

/**
 * Whether the active client `clientIdExpr` is granted property `propertyIdExpr` (a boolean expression): who a
 * partner callback may be told about.
 */
export function clientGrantedSql(clientIdExpr: string, propertyIdExpr: string): string {
  return `exists (select 1 from api_client_properties own_g join api_clients own_c on own_c.id = own_g.client_id and own_c.active
    where own_g.client_id = ${clientIdExpr} and own_g.property_id = ${propertyIdExpr})`;
}
