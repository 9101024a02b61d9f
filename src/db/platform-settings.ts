import { defineEntity, p } from "@mikro-orm/core";
import type { Database } from "./index.ts";

export const PlatformSettings = defineEntity({
  name: "PlatformSettings",
  tableName: "platform_settings",
  properties: {
    id: p.smallint().primary(),
    status: p.string(),
    partnerApiEnabled: p.boolean(),
    updatedAt: p.datetime(),
  },
});

export type PlatformStatusValue = "operational" | "degraded" | "maintenance";

/** The single platform row: API status indicator and the platform-wide partner API switch. */
export function createPlatformSettings(db: Database) {
  return {
    // Read on every status call and every partner request: one primary-key row on the plain pool.
    async read(): Promise<{ status: PlatformStatusValue; partnerApiEnabled: boolean }> {
      const { rows } = await db.pool.query<{ status: PlatformStatusValue; partner_api_enabled: boolean }>("select status, partner_api_enabled from platform_settings where id = 1");
      const row = rows[0];
      if (row === undefined) throw new Error("platform_settings row is missing");
      return { status: row.status, partnerApiEnabled: row.partner_api_enabled };
    },
    async setPartnerApi(enabled: boolean): Promise<void> {
      await db.orm.em.fork().nativeUpdate(PlatformSettings, { id: 1 }, { partnerApiEnabled: enabled, updatedAt: new Date() });
    },
  };
}
