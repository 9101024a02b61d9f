// The panel's live page across a dropped event stream, in headless chromium against the real server: the server
// ends every stream after EVENT_STREAM_MAX_SECONDS (as it does to make a long-lived client authorise again), the
// page opens a new one with the last cursor it received, and a change committed while no stream was open arrives on
// the new stream and shows on the page, without the page being loaded again.
import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Browser, type Request } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { StreamEventsRequestSchema, StreamEventsResponseSchema } from "../../gen/hotelops/event/v1/event_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { buildPanel } from "../../panel/build.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer } from "../helpers/auth.ts";
import { launchChromium } from "../helpers/prerequisites.ts";
import { openPage, see } from "../helpers/panel-browser.ts";
import { smallHotel } from "../helpers/small-hotel.ts";

let app: TestApp;
let browser: Browser;
beforeAll(async () => {
  await buildPanel();
  app = await startTestApp({
    env: {
      RATE_LIMIT_STAFF_PER_MINUTE: "100000",
      RATE_LIMIT_ANON_PER_MINUTE: "100000",
      EVENT_STREAM_KEEPALIVE_MS: "300",
      EVENT_STREAM_MAX_SECONDS: "3",
    },
  });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** The messages of a Connect streaming body (5-byte envelopes); the end-of-stream envelope is left out. */
function envelopes(body: Buffer): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at + 5 <= body.length;) {
    const flags = body[at]!;
    const length = body.readUInt32BE(at + 1);
    if ((flags & 0x02) === 0) out.push(body.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return out;
}

const cursorSent = (r: Request) => fromBinary(StreamEventsRequestSchema, envelopes(r.postDataBuffer()!)[0]!).cursor;

it("a stream the server ends is resumed from its cursor: what committed meanwhile arrives, the page is not reloaded", async () => {
  const hotel = await smallHotel(app, app.baseUrl);
  const res = await hotel.createReservation(
    hotel.stay({
      holderName: "Before Drop",
      arrivalDate: "2027-03-01",
      departureDate: "2027-03-02",
      totalMinor: 25000,
    }),
  );
  const made = (await res.json()) as { id: string; code: string };
  const context = await browser.newContext();
  const { page, problems, outside } = await openPage(context, app.baseUrl, []);
  try {
    await page.goto(`${app.baseUrl}/panel/sign-in`);
    await page.fill("#hotel", hotel.property.code);
    await page.fill("#email", hotel.manager.email);
    await page.fill("#password", "test-pass-2026");
    await page.click("button[type=submit]");
    await page.waitForURL(/\/panel\/today$/);
    const streams: Request[] = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/hotelops.event.v1.EventService/StreamEvents")) streams.push(r);
    });
    await page.goto(`${app.baseUrl}/panel/reservations/${made.id}`);
    await see(page, "#holder", "Before Drop");
    let loads = 0;
    page.on("load", () => loads++);
    // a mark in the document: a reload would drop it
    await page.evaluate("window.__kept = 'yes'");
    await page.locator('html[data-live="on"]').waitFor({ state: "attached", timeout: 20_000 });

    // the server ends the stream; while the page waits to reconnect, the reservation changes through gRPC
    await page.locator('html[data-live="off"]').waitFor({ state: "attached", timeout: 20_000 });
    const before = streams.length;
    await createClient(ReservationService, createGrpcTransport({ baseUrl: app.baseUrl })).updateReservation(
      { reservationId: made.id, holderName: "After Drop" },
      { headers: { ...bearer(hotel.manager.accessToken), "idempotency-key": newId() } },
    );
    await see(page, "#holder", "After Drop");
    await expect.poll(() => streams.length, { timeout: 10_000 }).toBeGreaterThan(before);

    // the ended stream's last cursor is the one the new stream asked to resume from
    const dropped = streams[before - 1]!;
    const resumed = streams[before]!;
    const received = envelopes(await (await dropped.response())!.body()).map((m) =>
      fromBinary(StreamEventsResponseSchema, m),
    );
    const last = received.at(-1)!.kind.value!.cursor;
    expect(last).not.toBe("");
    expect(cursorSent(resumed)).toBe(last);
    // and the change committed while no stream was open came on the resumed one
    await expect
      .poll(
        async () => {
          const r = await resumed.response();
          if (r === null) return [];
          return envelopes(await r.body())
            .map((m) => fromBinary(StreamEventsResponseSchema, m))
            .flatMap((m) => (m.kind.case === "event" ? [m.kind.value.type] : []));
        },
        { timeout: 10_000 },
      )
      .toContain("reservation.updated");
    expect(await page.evaluate<string>("window.__kept")).toBe("yes");
    expect(loads).toBe(0);
    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
  } finally {
    await context.close();
  }
}, 90_000);
