import { defineEntity, p, type EntityManager } from "@mikro-orm/core";
import type { Database } from "./index.ts";
import { systemClock, type Clock } from "../lib/clock.ts";

export const platformStatuses = ["operational", "degraded", "maintenance"] as const;
export type PlatformStatusValue = (typeof platformStatuses)[number];

/** The single row (id = 1, enforced by a check constraint) of platform-wide settings. */
export const PlatformSettings = defineEntity({
  name: "PlatformSettings",
  tableName: "platform_settings",
  properties: {
    id: p.smallint().primary(),
    status: p.enum(platformStatuses),
    partnerApiEnabled: p.boolean(),
    updatedAt: p.datetime(),
  },
});

export interface PlatformSettingsValue {
  status: PlatformStatusValue;
  partnerApiEnabled: boolean;
}

/** Reads the row through any EntityManager, e.g. `tx.em` to read it inside a transaction. */
export async function getPlatformSettings(em: EntityManager): Promise<PlatformSettingsValue> {
  const row = await em.findOneOrFail(PlatformSettings, { id: 1 }, { disableIdentityMap: true });
  return { status: row.status, partnerApiEnabled: row.partnerApiEnabled };
}

/** Switches the partner API platform-wide; pass `tx.em` to commit it with an event row. */
export async function setPartnerApi(em: EntityManager, enabled: boolean, now: Date): Promise<void> {
  await em.nativeUpdate(PlatformSettings, { id: 1 }, { partnerApiEnabled: enabled, updatedAt: now });
}

/** The single platform row: API status indicator and the platform-wide partner API switch. */
export function createPlatformSettings(db: Database, clock: Clock = systemClock) {
  return {
    // Read on every status call and every partner request: one primary-key row on the plain pool.
    async read(): Promise<PlatformSettingsValue> {
      const { rows } = await db.pool.query<{ status: PlatformStatusValue; partner_api_enabled: boolean }>("select status, partner_api_enabled from platform_settings where id = 1");
      const row = rows[0];
      if (row === undefined) throw new Error("platform_settings row is missing");
      return { status: row.status, partnerApiEnabled: row.partner_api_enabled };
    },
    async setPartnerApi(enabled: boolean): Promise<void> {
      await setPartnerApi(db.orm.em.fork(), enabled, clock.now());
    },
  };
}
