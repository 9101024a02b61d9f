import { sql, type Kysely } from "kysely";
import type pg from "pg";

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

export async function insertClient(db: Kysely<unknown>, c: { id: string; kind: ClientKind; provider: string; name: string; secretHash: string; scopes: string[]; now: Date }): Promise<void> {
  await sql`insert into api_clients (id, kind, provider, name, secret_hash, scopes, created_at) values (${c.id}, ${c.kind}, ${c.provider}, ${c.name}, ${c.secretHash}, ${c.scopes}::text[], ${c.now})`.execute(db);
}

export async function grantProperties(db: Kysely<unknown>, clientId: string, propertyIds: readonly string[]): Promise<void> {
  if (propertyIds.length === 0) return;
  await sql`insert into api_client_properties (client_id, property_id) select ${clientId}, unnest(${[...propertyIds]}::uuid[]) on conflict do nothing`.execute(db);
}

const clientColumns = sql`c.id, c.kind, c.provider, c.name, c.scopes, c.environment, c.active, c.created_at as "createdAt", c.approved_at as "approvedAt",
  coalesce((select array_agg(p.code order by p.code) from api_client_properties cp join properties p on p.id = cp.property_id where cp.client_id = c.id), '{}') as "propertyCodes"`;

type ClientRow = Omit<ApiClient, "createdAt" | "approvedAt"> & { createdAt: Date | string; approvedAt: Date | string | null };

// The ORM's connection may hand timestamptz back as text.
const toClient = (r: ClientRow): ApiClient => ({ ...r, createdAt: new Date(r.createdAt), approvedAt: r.approvedAt === null ? null : new Date(r.approvedAt) });

export async function findClient(db: Kysely<unknown>, id: string): Promise<ApiClient | undefined> {
  const { rows } = await sql<ClientRow>`select ${clientColumns} from api_clients c where c.id = ${id}`.execute(db);
  return rows.map(toClient)[0];
}

export async function listClients(db: Kysely<unknown>): Promise<ApiClient[]> {
  const { rows } = await sql<ClientRow>`select ${clientColumns} from api_clients c order by c.created_at desc, c.id`.execute(db);
  return rows.map(toClient);
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

/** Active partner clients granted the property, newest first. */
export async function listPropertyClients(pool: pg.Pool, propertyId: string): Promise<PropertyClient[]> {
  const { rows } = await pool.query<PropertyClient>(
    `select c.id, c.provider, c.name, c.scopes, c.environment, c.created_at as "createdAt", c.approved_at as "approvedAt", c.last_token_at as "lastTokenAt"
     from api_clients c join api_client_properties cp on cp.client_id = c.id
     where cp.property_id = $1 and c.kind = 'partner' and c.active order by c.created_at desc, c.id`,
    [propertyId],
  );
  return rows;
}

/** Marks the client approved for live writes; false when there is no such client. */
export async function approveClient(db: Kysely<unknown>, id: string, now: Date): Promise<boolean> {
  const res = await sql`update api_clients set environment = 'live', approved_at = coalesce(approved_at, ${now}) where id = ${id}`.execute(db);
  return (res.numAffectedRows ?? 0n) > 0n;
}

/** One indexed query: the client row and its active granted properties. */
export const clientCredentialsSql = `select c.id, c.kind, c.provider, c.environment, c.scopes, c.active, c.secret_hash as "secretHash",
  coalesce((select array_agg(cp.property_id) from api_client_properties cp join properties p on p.id = cp.property_id and p.active where cp.client_id = c.id), '{}') as "propertyIds"
  from api_clients c where c.id = $1`;
