import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { systemClock } from "../../src/lib/clock.ts";
import { eventCatalogue } from "../../src/modules/events/index.ts";
import { createFolioService } from "../../src/modules/folio/index.ts";
import { createInvoiceService } from "../../src/modules/invoices/index.ts";
import { bearer, createStaffSession } from "../helpers/auth.ts";
import { seedInvoiceIssuer } from "../helpers/hotel-fixtures.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";
import { booking, createHotel, services } from "../reservations/fixtures.ts";

// The committed OpenAPI document (what /openapi.json and /docs serve) against real deliveries of every type.
const doc = JSON.parse(readFileSync(new URL("../../openapi/hotelops.v1.json", import.meta.url), "utf8")) as {
  webhooks: Record<
    string,
    { post: { requestBody: { content: { "application/json": { schema: object; example: unknown } } } } }
  >;
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

function schemaOf(type: string): object {
  return doc.webhooks[type]!.post.requestBody.content["application/json"].schema;
}

let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  app = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver() } });
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

describe("event catalogue in OpenAPI", () => {
  it("has one webhooks entry per event type, each example valid against its schema", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual(Object.keys(eventCatalogue).sort());
    for (const type of Object.keys(doc.webhooks)) {
      const validate = ajv.compile(schemaOf(type));
      const example = doc.webhooks[type]!.post.requestBody.content["application/json"].example;
      expect(validate(example), `${type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });

  it("a real delivery of every type matches its schema exactly (no field missing, none extra)", async () => {
    const svc = services(app);
    const folios = createFolioService({ transact: app.deps.transact, clock: svc.clock });
    const invoices = createInvoiceService({ transact: app.deps.transact, clock: svc.clock });
    const h = await createHotel(app, svc.inventory, { rooms: 2 });
    const manager = await createStaffSession(app, { propertyCode: h.code, role: "manager" });
    const created = await fetch(`${app.baseUrl}/api/panel/v1/webhook-endpoints`, {
      method: "POST",
      headers: { ...bearer(manager.accessToken), "content-type": "application/json" },
      body: JSON.stringify({
        url: receiver.url("/all"),
        eventTypes: Object.keys(eventCatalogue).filter((t) => t !== "webhook.test"),
      }),
    }).then((r) => r.json() as Promise<{ endpoint: { id: string } }>);

    // Every event type through the services that make it, as in production.
    const { reservation } = await svc.reservations.create(h.actor, {
      ...booking(h, {
        arrivalDate: "2026-11-22",
        departureDate: "2026-11-24",
        externalReference: "EXP-1",
        channel: "expedia",
      }),
      source: "CHANNEL",
    });
    const line = reservation.rooms[0]!.id;
    await svc.reservations.update(h.actor, reservation.id, { departureDate: "2026-11-25" });
    await svc.reservations.checkIn(h.actor, reservation.id, line, h.roomIds[0]!);
    const folio = await folios.getFolio(h.propertyId, { reservationId: reservation.id });
    await folios.postCharge(h.propertyId, "user:test", {
      folioId: folio.id,
      code: "MINIBAR",
      description: "Minibar",
      amountMinor: 12_000n,
    });
    await folios.postPayment(h.propertyId, "user:test", {
      folioId: folio.id,
      amountMinor: 12_000n,
      methodCode: "VISA",
    });
    const draft = await invoices.createDraft(h.propertyId, "user:test", { folioId: folio.id });
    await seedInvoiceIssuer(app.db.pool, h.propertyId);
    await invoices.finalize(h.propertyId, "user:test", { invoiceId: draft.id });
    await svc.reservations.checkOut(h.actor, reservation.id, line);
    const other = (
      await svc.reservations.create(h.actor, booking(h, { arrivalDate: "2026-12-01", departureDate: "2026-12-03" }))
    ).reservation;
    await svc.reservations.cancel(h.actor, other.id);
    const test = await fetch(`${app.baseUrl}/api/panel/v1/webhook-endpoints/${created.endpoint.id}/test`, {
      method: "POST",
      headers: { ...bearer(manager.accessToken), "content-type": "application/json" },
      body: "{}",
    });
    expect(test.status).toBe(200);

    const seen = new Map<string, unknown[]>();
    const deadline = Date.now() + 10_000;
    while (seen.size < Object.keys(eventCatalogue).length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      seen.clear();
      for (const r of receiver.received.filter((x) => x.path === "/all")) {
        const body = JSON.parse(r.body) as { type: string };
        seen.set(body.type, [...(seen.get(body.type) ?? []), body]);
      }
    }
    expect([...seen.keys()].sort()).toEqual(Object.keys(eventCatalogue).sort());
    for (const [type, bodies] of seen) {
      const validate = ajv.compile(schemaOf(type));
      for (const body of bodies) expect(validate(body), `${type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  }, 30_000);
});
