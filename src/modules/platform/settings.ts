import type { Queryable, Statement } from "../../db/queryable.ts";
import { systemClock, type Clock } from "../../lib/clock.ts";

type PlatformStatusValue = "operational" | "degraded" | "maintenance";

export interface PlatformSettingsValue {
  status: PlatformStatusValue;
  partnerApiEnabled: boolean;
}

/**
 * Reads the single row (id = 1, enforced by a check constraint) of platform-wide settings: on every status call
 * and every partner request, one primary-key row. Pass `tx` to read it inside a transaction.
 */
export async function getPlatformSettings(q: Queryable): Promise<PlatformSettingsValue> {
  const [row] = await q.query<{ status: PlatformStatusValue; partnerApiEnabled: boolean }>(readSettings);
  if (row === undefined) throw new Error("platform_settings row is missing");
  return row;
}

const readSettings: Statement = {
  name: "platform_settings",
  text: `select status, partner_api_enabled as "partnerApiEnabled" from platform_settings where id = 1`,
};

/** Switches the partner API platform-wide; pass `tx` to commit it with an event row. */
export async function setPartnerApi(q: Queryable, enabled: boolean, now: Date): Promise<void> {
  await q.query("update platform_settings set partner_api_enabled = $1, updated_at = $2 where id = 1", [enabled, now]);
}

/**
 * True while the partner API (and with it webhook delivery) is switched on: a predicate for the statements of other
 * modules that must check the switch atomically with their own rows (webhook deliveries are created and claimed
 * only while it holds). The platform module owns the table; this text is the one place that names it for them.
 */
export const partnerApiOnSql = "exists (select 1 from platform_settings where id = 1 and partner_api_enabled)";

/** The single platform row: API status indicator and the platform-wide partner API switch. */
export function createPlatformSettings(db: Queryable, clock: Clock = systemClock) {
  return {
    read: () => getPlatformSettings(db),
    setPartnerApi: (enabled: boolean) => setPartnerApi(db, enabled, clock.now()),
  };
}
