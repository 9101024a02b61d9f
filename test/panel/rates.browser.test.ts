// The panel's Rates page in headless chromium against the real server: the grid per room type x day over 60 days
// shows the rooms free and sold and each rate plan's price; a manager sets restrictions over a range on chosen
// weekdays and both the grid and the ARI read over Connect show them; a viewer (no rates.manage) gets no form.
// axe-core in both languages and a screenshot of each screen (the folder is printed).
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { buildPanel } from "../../panel/build.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { launchChromium } from "../helpers/prerequisites.ts";
import { checkScreen, openPage, setLang, signInToToday } from "../helpers/panel-browser.ts";

const shotsDir =
  process.env.PANEL_SCREENSHOTS_DIR ??
  join(tmpdir(), `hotelops-rates-screens-${new Date().toISOString().replace(/[:.]/g, "-")}`);
const password = "rates-pass-2026";

let app: TestApp;
let browser: Browser;
let hotel: { id: string; code: string };
let manager: { email: string; accessToken: string };
let viewerEmail: string;
let ids: { dbl: string; bar: string };

beforeAll(async () => {
  await buildPanel();
  mkdirSync(shotsDir, { recursive: true });
  console.log(`rates screenshots: ${shotsDir}`);
  app = await startTestApp({ env: { RATE_LIMIT_STAFF_PER_MINUTE: "100000", RATE_LIMIT_ANON_PER_MINUTE: "100000" } });
  hotel = await createTestProperty(app, { businessDate: "2027-03-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(hotel.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  for (const n of ["101", "102", "103"]) await inventory.createRoom(hotel.id, { number: n, roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(hotel.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  ids = { dbl: dbl.id, bar: bar.id };
  await inventory.setPrices(hotel.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-05-01",
    amountMinor: 25000n,
  });
  const m = await createStaffSession(app, { propertyCode: hotel.code, role: "manager", password });
  manager = { email: m.email, accessToken: m.accessToken };
  viewerEmail = (await createStaffSession(app, { propertyCode: hotel.code, role: "viewer", password })).email;
  // one room sold for the nights of 3 and 4 March (the mobile API)
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
    method: "POST",
    headers: { ...bearer(m.accessToken), "content-type": "application/json", "idempotency-key": newId() },
    body: JSON.stringify({
      holderName: "Ayşe Yılmaz",
      arrivalDate: "2027-03-03",
      departureDate: "2027-03-05",
      roomTypeId: dbl.id,
      ratePlanId: bar.id,
      adults: 2,
      totalMinor: 50000,
      currency: "TRY",
    }),
  });
  if (res.status !== 201) throw new Error(`mobile create: ${res.status} ${await res.text()}`);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const cell = (page: Page, key: string) => page.locator(`#ari-grid td[data-cell="${key}"]`);

async function signIn(page: Page, email: string) {
  await signInToToday(page, app.baseUrl, { hotelCode: hotel.code, email, password });
  await page.goto(`${app.baseUrl}/panel/rates`);
  await page.locator("#ari-grid").waitFor({ timeout: 20_000 });
}

describe("the panel's rates grid", () => {
  it("shows 60 days of availability and prices; a manager sets restrictions over a range on chosen weekdays", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-GB" });
    const { page, problems } = await openPage(context, app.baseUrl, [400, 401, 403, 404, 409]);
    try {
      await signIn(page, manager.email);
      await setLang(page, "en");
      // a real table: one column header per day of the 60, a row header per room type and per rate plan
      expect(await page.locator("#ari-grid thead th[scope=col]").count()).toBe(61);
      expect(await page.locator("#ari-grid tbody th[scope=row]").allInnerTexts()).toEqual(["DBL rooms", "DBL · BAR"]);
      expect(await cell(page, "DBL:BAR:2027-03-01").innerText()).toBe("250.00 TRY");
      expect(await cell(page, "DBL:BAR:2027-04-29").innerText()).toBe("250.00 TRY");
      expect(await cell(page, "DBL:avail:2027-03-03").innerText()).toBe("2 free, 1 sold");
      expect(await cell(page, "DBL:avail:2027-03-05").innerText()).toBe("3 free, 0 sold");
      await checkScreen(page, shotsDir, "40-rates-grid");

      // Fridays and Saturdays of 1 to 14 March: minimum stay 2 and stop sell
      expect(await page.locator("#ari-plan").inputValue()).toBe(ids.bar);
      await page.fill("#ari-edit-from", "2027-03-01");
      await page.fill("#ari-edit-to", "2027-03-14");
      await page.check("#ari-wd-5");
      await page.check("#ari-wd-6");
      await page.fill("#ari-min", "2");
      await page.selectOption("#ari-stop", "yes");
      await checkScreen(page, shotsDir, "41-rates-edit");
      await page.click("#ari-apply");
      await page.locator("#ari-done", { hasText: "4 days" }).waitFor({ timeout: 20_000 });
      await page.locator(`#ari-grid td[data-cell="DBL:BAR:2027-03-05"]`, { hasText: "stop sell" }).waitFor();
      for (const d of ["2027-03-05", "2027-03-06", "2027-03-12", "2027-03-13"])
        expect(await cell(page, `DBL:BAR:${d}`).innerText(), d).toBe("250.00 TRY\nmin 2, stop sell");
      for (const d of ["2027-03-04", "2027-03-07", "2027-03-19"])
        expect(await cell(page, `DBL:BAR:${d}`).innerText(), d).toBe("250.00 TRY");
      await checkScreen(page, shotsDir, "42-rates-edited");

      // the ARI read over Connect says the same
      const inventory = createClient(
        InventoryService,
        createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      );
      const ari = await inventory.getAri(
        { propertyCode: hotel.code, from: "2027-03-04", to: "2027-03-08", roomTypeIds: [ids.dbl] },
        { headers: bearer(manager.accessToken) },
      );
      const days = ari.roomTypes[0]!.ratePlans.find((p) => p.ratePlanId === ids.bar)!.days;
      expect(days.map((d) => [d.date, d.minStay ?? null, d.stopSell])).toEqual([
        ["2027-03-04", null, false],
        ["2027-03-05", 2, true],
        ["2027-03-06", 2, true],
        ["2027-03-07", null, false],
      ]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it("a viewer sees the grid without the form", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "tr-TR" });
    const { page, problems } = await openPage(context, app.baseUrl, [400, 401, 403, 404, 409]);
    try {
      await signIn(page, viewerEmail);
      await setLang(page, "tr");
      expect(await cell(page, "DBL:BAR:2027-03-02").innerText()).toBe("250,00 TRY");
      expect(await page.locator("#ari-edit").count()).toBe(0);
      await checkScreen(page, shotsDir, "43-rates-viewer");
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
