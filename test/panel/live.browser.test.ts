// The panel's live pages in headless chromium against the real server: Today and the reservation page keep an
// event stream open (EventService.StreamEvents over Connect) and show a reservation made or changed through the
// API without a reload and without polling.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
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
      EVENT_STREAM_KEEPALIVE_MS: "500",
    },
  });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

it("Today and the reservation page update when a reservation is created and changed through the API", async () => {
  const hotel = await smallHotel(app, app.baseUrl);
  const context = await browser.newContext();
  const { page, problems, outside } = await openPage(context, app.baseUrl, []);
  try {
    await page.goto(`${app.baseUrl}/panel/sign-in`);
    await page.fill("#hotel", hotel.property.code);
    await page.fill("#email", hotel.manager.email);
    await page.fill("#password", "test-pass-2026");
    await page.click("button[type=submit]");
    await page.waitForURL(/\/panel\/today$/);
    await see(page, "#business-date");
    await page.locator('html[data-live="on"]').waitFor({ state: "attached", timeout: 20_000 });
    const dashboards: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("GetDashboard")) dashboards.push(r.url());
    });
    // nothing changes for a while: the page asks nothing (no polling)
    await page.waitForTimeout(1_500);
    expect(dashboards).toEqual([]);

    const res = await hotel.createReservation(
      hotel.stay({
        holderName: "Live Guest",
        arrivalDate: "2027-03-01",
        departureDate: "2027-03-02",
        totalMinor: 25000,
      }),
    );
    expect(res.status).toBe(201);
    const made = (await res.json()) as { id: string; code: string };
    await see(page, "main", made.code);
    expect(dashboards.length).toBeGreaterThan(0);

    await page.goto(`${app.baseUrl}/panel/reservations/${made.id}`);
    await see(page, "h1", made.code);
    await page.locator('html[data-live="on"]').waitFor({ state: "attached", timeout: 20_000 });
    await createClient(ReservationService, createGrpcTransport({ baseUrl: app.baseUrl })).updateReservation(
      { reservationId: made.id, holderName: "Live Guest Renamed" },
      { headers: { ...bearer(hotel.manager.accessToken), "idempotency-key": newId() } },
    );
    await see(page, "#holder", "Live Guest Renamed");
    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
  } finally {
    await context.close();
  }
}, 90_000);
