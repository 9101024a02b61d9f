import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/lib/clock.ts";
import { partnerEventRetentionDays } from "../../src/modules/events/index.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { createTestCa, startWebhookApp, testResolver, type WebhookApp } from "../helpers/webhooks.ts";

// Every partner message's outcome and every ARI push leaves a partner event; the daily webhook purge deletes those
// older than their retention (the 30 days of delivery history and the day of retries before it).

const dayMs = 24 * 3600_000;
const clock = new ManualClock(new Date().toISOString());
let app: WebhookApp;
let property: { id: string; code: string };

beforeAll(async () => {
  app = await startWebhookApp({ ca: createTestCa(), clock, webhooks: { resolver: testResolver(), dispatch: false } });
  property = await createTestProperty(app, { code: "PEP-1" });
});
afterAll(async () => {
  await app?.close();
});

/** Sends a cancellation of a booking we do not have (a rejected outcome, one partner event) with a fresh client. */
async function rejectedMessage(reference: string): Promise<void> {
  const partner = await createTestClient(app, {
    propertyCodes: [property.code],
    scopes: ["reservations.write"],
    approved: true,
  });
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
    method: "POST",
    headers: { ...bearer(partner.accessToken), "content-type": "application/json", "idempotency-key": randomUUID() },
    body: JSON.stringify({ eventType: "CANCELLED", externalReference: reference }),
  });
  expect(res.status).toBe(202);
}

async function partnerEvents(): Promise<string[]> {
  const { rows } = await app.db.pool.query<{ ref: string }>(
    "select data->>'externalReference' as ref from partner_events where property_id = $1 order by created_at",
    [property.id],
  );
  return rows.map((r) => r.ref);
}

async function until(n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await partnerEvents()).length < n) {
    if (Date.now() > deadline) throw new Error(`fewer than ${n} partner events`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("partner events retention", () => {
  it(`keeps partner events ${partnerEventRetentionDays} days, then the daily purge deletes them`, async () => {
    await rejectedMessage("PEP-OLD-1");
    await rejectedMessage("PEP-OLD-2");
    await until(2);

    clock.advance(30 * dayMs);
    expect((await app.parts.engine.purge()).partnerEvents).toBe(0);
    expect(await partnerEvents()).toEqual(["PEP-OLD-1", "PEP-OLD-2"]);
    await rejectedMessage("PEP-NEW");
    await until(3);

    clock.advance(dayMs + 3600_000);
    expect((await app.parts.engine.purge()).partnerEvents).toBe(2);
    expect(await partnerEvents()).toEqual(["PEP-NEW"]);
    expect((await app.parts.engine.purge()).partnerEvents).toBe(0);
  });
});
