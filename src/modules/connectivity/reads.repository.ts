import type pg from "pg";
import type { PartnerRatePlan } from "../inventory/index.ts";
import type { Queryable, Statement } from "../../db/queryable.ts";

export type MappingKind = "property" | "room_type" | "rate_plan";

/** internal id -> provider code, for one provider at one property. */
export async function mappingsOf(pool: pg.Pool, propertyId: string, provider: string): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ internal_id: string; external_code: string }>(
    "select internal_id, external_code from provider_mappings where property_id = $1 and provider = $2",
    [propertyId, provider],
  );
  return new Map(rows.map((r) => [r.internal_id, r.external_code]));
}

/**
 * Provider codes -> internal ids of the room types and rate plans one inbound message names, in one statement (a
 * named one: every message runs it). The map's keys are `room_type:<code>` and `rate_plan:<code>`; an unmapped code
 * is absent.
 */
export async function internalIdsOf(
  q: Queryable,
  propertyId: string,
  provider: string,
  codes: { roomTypes: readonly string[]; ratePlans: readonly string[] },
): Promise<Map<string, string>> {
  const rows = await q.query<{ key: string; internal_id: string }>(internalIdsStatement, [
    propertyId,
    provider,
    codes.roomTypes,
    codes.ratePlans,
  ]);
  return new Map(rows.map((r) => [r.key, r.internal_id]));
}

const internalIdsStatement: Statement = {
  name: "connectivity_internal_ids",
  text: `select kind || ':' || external_code as key, internal_id from provider_mappings
          where property_id = $1 and provider = $2
            and ((kind = 'room_type' and external_code = any($3::text[])) or (kind = 'rate_plan' and external_code = any($4::text[])))`,
};

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
    pricesByOccupancy: rp.pricesByOccupancy,
    ...(rp.policy === null ? {} : { cancellationPolicy: rp.policy }),
    ...(rp.deposit === null ? {} : { depositPolicy: rp.deposit }),
  };
}
