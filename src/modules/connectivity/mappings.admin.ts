import type pg from "pg";
import { poolQueryable } from "../../db/queryable.ts";
import { AppError, invalidField } from "../../errors.ts";
import { findCatalogueId } from "../inventory/index.ts";
import { findPropertyByCode } from "../properties/index.ts";
import { setMapping, type MappingKind } from "./reads.repository.ts";

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
  const property = await findPropertyByCode(poolQueryable(pool), m.propertyCode);
  if (property === undefined) throw new AppError("not_found", `Property ${m.propertyCode} was not found.`);
  let internalId = property.id;
  if (m.kind !== "property") {
    if (m.code === undefined) throw invalidField("code", `is required for ${m.kind} mappings`);
    const id = await findCatalogueId(poolQueryable(pool), property.id, m.kind, m.code);
    if (id === undefined)
      throw new AppError("not_found", `No ${m.kind.replace("_", " ")} ${m.code} at ${m.propertyCode}.`);
    internalId = id;
  }
  await setMapping(pool, {
    propertyId: property.id,
    provider: m.provider,
    kind: m.kind,
    internalId,
    externalCode: m.externalCode,
  });
}
