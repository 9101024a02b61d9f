import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import { setMapping, type MappingKind } from "./reads.repository.ts";

const TABLE: Record<Exclude<MappingKind, "property">, string> = { room_type: "room_types", rate_plan: "rate_plans" };

/**
 * Operator-side mapping maintenance (ops CLI `mapping:set`): our code -> the provider's code. A provider code
 * maps to one entity of a kind per property; re-mapping an entity replaces its code.
 */
export async function setProviderMapping(
  pool: pg.Pool,
  m: { propertyCode: string; provider: string; kind: MappingKind; code?: string; externalCode: string },
): Promise<void> {
  if (!/^[a-z0-9][a-z0-9_.-]{0,63}$/.test(m.provider))
    throw invalidField("provider", "must be a lowercase provider code");
  if (m.externalCode.length < 1 || m.externalCode.length > 100)
    throw invalidField("externalCode", "must be 1 to 100 characters");
  const property = (await pool.query<{ id: string }>("select id from properties where code = $1", [m.propertyCode]))
    .rows[0];
  if (property === undefined) throw new AppError("not_found", `Property ${m.propertyCode} was not found.`);
  let internalId = property.id;
  if (m.kind !== "property") {
    if (m.code === undefined) throw invalidField("code", `is required for ${m.kind} mappings`);
    const row = (
      await pool.query<{ id: string }>(`select id from ${TABLE[m.kind]} where property_id = $1 and code = $2`, [
        property.id,
        m.code,
      ])
    ).rows[0];
    if (row === undefined)
      throw new AppError("not_found", `No ${m.kind.replace("_", " ")} ${m.code} at ${m.propertyCode}.`);
    internalId = row.id;
  }
  await setMapping(pool, {
    propertyId: property.id,
    provider: m.provider,
    kind: m.kind,
    internalId,
    externalCode: m.externalCode,
  });
}
