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
    async read(): Promise<{ status: PlatformStatusValue; partnerApiEnabled: boolean }> {
      const row = await db.orm.em.fork().findOneOrFail(PlatformSettings, { id: 1 });
      return { status: row.status as PlatformStatusValue, partnerApiEnabled: row.partnerApiEnabled };
    },
    async setPartnerApi(enabled: boolean): Promise<void> {
      await db.orm.em.fork().nativeUpdate(PlatformSettings, { id: 1 }, { partnerApiEnabled: enabled, updatedAt: new Date() });
    },
  };
}
