import type pg from "pg";
import type { PartnerRatePlan } from "../inventory/index.ts";

export type MappingKind = "property" | "room_type" | "rate_plan";

/** internal id -> provider code, for one provider at one property. */
export async function mappingsOf(pool: pg.Pool, propertyId: string, provider: string): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ internal_id: string; external_code: string }>(
    "select internal_id, external_code from provider_mappings where property_id = $1 and provider = $2",
    [propertyId, provider],
  );
  return new Map(rows.map((r) => [r.internal_id, r.external_code]));
}

/** Provider code -> internal id for one kind (used to translate inbound events). */
export async function internalIdOf(
  db: { query: pg.Pool["query"] },
  propertyId: string,
  provider: string,
  kind: MappingKind,
  externalCode: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ internal_id: string }>(
    "select internal_id from provider_mappings where property_id = $1 and provider = $2 and kind = $3 and external_code = $4",
    [propertyId, provider, kind, externalCode],
  );
  return rows[0]?.internal_id;
}

export async function setMapping(
  pool: pg.Pool,
  m: { propertyId: string; provider: string; kind: MappingKind; internalId: string; externalCode: string },
): Promise<void> {
  await pool.query(
    `insert into provider_mappings (property_id, provider, kind, internal_id, external_code) values ($1, $2, $3, $4, $5)
     on conflict (property_id, provider, kind, internal_id) do update set external_code = excluded.external_code, updated_at = now()`,
    [m.propertyId, m.provider, m.kind, m.internalId, m.externalCode],
  );
}

// The partner reads of the catalogue are inventory's (its tables), re-exported for this module.
export { ratePlansOf, roomTypesOf } from "../inventory/index.ts";

/** A rate plan's cancellation policy and deposit as the partner reads show them (absent fields: none). */
export function partnerTerms(rp: PartnerRatePlan) {
  return {
    ...(rp.policy === null ? {} : { cancellationPolicy: rp.policy }),
    ...(rp.deposit === null ? {} : { depositPolicy: rp.deposit }),
  };
}
