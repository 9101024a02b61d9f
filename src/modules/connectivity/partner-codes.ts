import type pg from "pg";
import { poolQueryable } from "../../db/queryable.ts";
import { findClient } from "../auth/index.ts";
import { roomTypesSql } from "../inventory/index.ts";
import type { PartnerRoomTypeCodes } from "../webhooks/index.ts";

/**
 * The room type codes of a partner client's provider at a property, for what is sent to the client's callback
 * addresses (a booking's room types in its codes, as the reservation feed and the ARI push show them). A client
 * that no longer exists gets ours.
 */
export function createPartnerRoomTypeCodes(pool: pg.Pool): PartnerRoomTypeCodes {
  return async (clientId, propertyId) => {
    const client = await findClient(poolQueryable(pool), clientId);
    if (client === undefined) return new Map();
    const { rows } = await pool.query<{ code: string; external_code: string }>(
      `select rt.code, pm.external_code from (${roomTypesSql("$1")}) rt
         join provider_mappings pm on pm.property_id = $1 and pm.provider = $2 and pm.kind = 'room_type' and pm.internal_id = rt.id`,
      [propertyId, client.provider],
    );
    return new Map(rows.map((r) => [r.code, r.external_code]));
  };
}
