// The panel as a hotel's front office, in headless chromium against the real server: the navigation after sign-in
// in English and Turkish, Today with its lists leading to the actions, a search finding bookings made through
// other faces, the reservation page with the price of each night, a check-in by keyboard alone, the folio and a
// payment, a check-out with the balance shown first, the room rack (one click, 375 px), the rates and the night
// audit with its confirmation; a viewer sees the pages without the actions. axe-core on every screen in both
// languages and a screenshot of each (the folder is printed).
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { buildPanel } from "../../panel/build.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { launchChromium } from "../helpers/prerequisites.ts";
import { activeId, checkScreen, openPage, see, setLang, settled, signInToToday } from "../helpers/panel-browser.ts";

const shotsDir =
  process.env.PANEL_SCREENSHOTS_DIR ??
  join(tmpdir(), `hotelops-front-office-screens-${new Date().toISOString().replace(/[:.]/g, "-")}`);
const password = "front-pass-2026";

let app: TestApp;
let browser: Browser;
let hotel: { id: string; code: string };
let managerEmail: string;
let viewerEmail: string;
const codes = { arriving: "", departing: "", channel: "" };
let arrivingId = "";

beforeAll(async () => {
  await buildPanel();
  mkdirSync(shotsDir, { recursive: true });
  console.log(`front office screenshots: ${shotsDir}`);
  app = await startTestApp({ env: { RATE_LIMIT_STAFF_PER_MINUTE: "100000", RATE_LIMIT_ANON_PER_MINUTE: "100000" } });
  hotel = await createTestProperty(app, { businessDate: "2027-03-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(hotel.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const rooms: Record<string, string> = {};
  for (const n of ["101", "102", "103", "104", "201"])
    rooms[n] = (await inventory.createRoom(hotel.id, { number: n, roomTypeId: dbl.id })).id;
  const bar = await inventory.createRatePlan(hotel.id, {
    code: "BAR",
    name: "Best available",
    boardType: "BED_AND_BREAKFAST",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(hotel.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-04-30",
    amountMinor: 25000n,
  });
  const manager = await createStaffSession(app, { propertyCode: hotel.code, role: "manager", password });
  managerEmail = manager.email;
  viewerEmail = (await createStaffSession(app, { propertyCode: hotel.code, role: "viewer", password })).email;
  const mobileCreate = async (holderName: string, arrivalDate: string, departureDate: string, nights: number) => {
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
      method: "POST",
      headers: { ...bearer(manager.accessToken), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        holderName,
        arrivalDate,
        departureDate,
        roomTypeId: dbl.id,
        ratePlanId: bar.id,
        adults: 2,
        totalMinor: 25000 * nights,
        currency: "TRY",
      }),
    });
    if (res.status !== 201) throw new Error(`mobile create: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string; code: string; rooms: { id: string }[] };
  };
  // a guest in house since yesterday, leaving today: checked in, then yesterday closed by the night audit
  const departing = await mobileCreate("Cem Kaya", "2027-03-01", "2027-03-02", 1);
  codes.departing = departing.code;
  await app.services.reservations.checkIn(
    { propertyId: hotel.id, canOverridePrice: false },
    departing.id,
    departing.rooms[0]!.id,
    rooms["101"],
  );
  await app.services.nightAudit.run(hotel.id, "test", { expectedBusinessDate: "2027-03-01" });
  // arriving today (the mobile app), and later through an internal system over gRPC as a channel's booking
  const arriving = await mobileCreate("Ayşe Yılmaz", "2027-03-02", "2027-03-04", 2);
  codes.arriving = arriving.code;
  arrivingId = arriving.id;
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [hotel.code],
    scopes: ["reservations.write", "reservations.read"],
  });
  const created = await createClient(
    ReservationService,
    createGrpcTransport({ baseUrl: app.baseUrl }),
  ).createReservation(
    {
      propertyCode: hotel.code,
      source: ReservationSource.API,
      holderName: "Hans Müller",
      arrivalDate: "2027-03-10",
      departureDate: "2027-03-11",
      rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 1, children: 0 }],
    },
    { headers: bearer(internal.accessToken) },
  );
  codes.channel = created.reservation!.code;
  await inventory.setRoomStatus(hotel.id, { roomId: rooms["104"]!, status: "DIRTY" });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const navLink = (page: Page, name: string) => page.locator("nav.main-nav").getByRole("link", { name, exact: true });

async function signIn(page: Page, email: string) {
  await signInToToday(page, app.baseUrl, { hotelCode: hotel.code, email, password });
}

/** Tab from where the focus is until the element with this id has it (at most 40 stops). */
async function tabTo(page: Page, id: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if ((await activeId(page)) === id) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`#${id} not reached by Tab`);
}

describe("the panel as the front office", () => {
  it("a manager works the day: Today, search, check-in by keyboard, folio and payment, check-out, rack, rates, night audit", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-GB" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400, 401, 403, 404, 409]);
    try {
      await signIn(page, managerEmail);
      // the navigation a front office expects, in both languages
      const names = {
        en: ["Today", "Reservations", "Rooms", "Rates", "Night audit", "Integrations"],
        tr: [] as string[],
      };
      names.tr = ["Bugün", "Rezervasyonlar", "Odalar", "Fiyatlar", "Gün sonu", "Entegrasyonlar"];
      for (const lang of ["tr", "en"] as const) {
        await setLang(page, lang);
        expect(await page.locator("nav.main-nav a").allInnerTexts()).toEqual(names[lang]);
      }

      // Today: the business date and the day's lists, each leading to the action
      await see(page, "#business-date", "2 Mar 2027");
      await see(page, "#arrivals a", `Check in ${codes.arriving}`);
      await see(page, "#departures a", `Check out ${codes.departing}`);
      await see(page, "#in-house a", codes.departing);
      expect(await page.locator("#to-clean").innerText()).toContain("Room 104");
      // the hotel's rate plan asks no deposit: the overdue list (ListOverdueDeposits) is there and empty
      await see(page, "#overdue-deposits-h", "Deposits overdue (0)");
      expect(await page.locator("main").innerText()).not.toContain(codes.channel);
      await checkScreen(page, shotsDir, "21-today");
      await setLang(page, "tr");
      await see(page, "#business-date", "İş günü: 2 Mar 2027");
      await see(page, "#arrivals a", `${codes.arriving} için giriş yap`);
      await see(page, "#overdue-deposits-h", "Vadesi geçen depozitolar (0)");
      await setLang(page, "en");

      // Reservations: a search by name or code finds bookings of the mobile app and of an internal system
      await navLink(page, "Reservations").click();
      await see(page, "h1", "Reservations");
      await see(page, "#reservations td", "Hans Müller");
      await page.fill("#search", "müller");
      await page.keyboard.press("Enter");
      await see(page, "#search-count", "1 reservation(s) found.");
      expect(await page.locator("#reservations tbody tr").count()).toBe(1);
      expect(await page.locator("#reservations").innerText()).toContain(codes.channel);
      expect(await page.locator("#reservations").innerText()).toContain("API");
      await page.fill("#search", codes.arriving.toLowerCase());
      await page.click("form[role=search] button");
      await see(page, "#reservations td", "Ayşe Yılmaz");
      expect(await page.locator("#reservations tbody tr").count()).toBe(1);
      await page.fill("#search", "nobody-here");
      await page.keyboard.press("Enter");
      await see(page, "#search-count", "No reservation matches.");
      await checkScreen(page, shotsDir, "22-reservations-none");
      await page.fill("#search", "yılmaz");
      await page.keyboard.press("Enter");
      await see(page, "#reservations td", "Ayşe Yılmaz");
      await checkScreen(page, shotsDir, "22-reservations");
      // the search survives a reload (it is in the address)
      await page.reload();
      await see(page, "#reservations td", "Ayşe Yılmaz");
      expect(await page.inputValue("#search")).toBe("yılmaz");

      // the reservation page: stay, status, the price of each night
      await page.getByRole("link", { name: codes.arriving, exact: true }).click();
      await page.waitForURL(new RegExp(`/panel/reservations/${arrivingId}$`));
      await see(page, "h1", `Reservation ${codes.arriving}`);
      expect(await page.locator("#status").innerText()).toBe("Guaranteed");
      expect(await page.locator("#stay").innerText()).toContain("2 night(s)");
      const nights = await page.locator("table.nights").first().innerText();
      expect(nights).toContain("2 Mar 2027");
      expect(nights).toContain("3 Mar 2027");
      expect(nights).toContain("250.00 TRY");
      expect(nights).toContain("500.00 TRY");
      // the occupied room (101) and the dirty one (104) are not offered
      const offered = await page.locator("#checkin-room-0 option").allInnerTexts();
      expect(offered).toEqual(["Room 102: Clean", "Room 103: Clean", "Room 201: Clean"]);
      await checkScreen(page, shotsDir, "23-reservation");

      // check-in by keyboard alone: from the page's heading, Tab to the room, choose another, Tab to the button
      await page.reload();
      await see(page, "#checkin-room-0");
      expect(await page.evaluate<string>("document.activeElement.tagName")).toBe("H1");
      await tabTo(page, "checkin-room-0");
      await page.keyboard.press("ArrowDown");
      expect(await page.inputValue("#checkin-room-0")).not.toBe("");
      expect(await page.locator("#checkin-room-0 option:checked").innerText()).toBe("Room 103: Clean");
      await page.keyboard.press("Tab");
      expect(await activeId(page)).toBe("checkin-0");
      await page.keyboard.press("Enter");
      await see(page, "#done", `${codes.arriving} checked in to room 103.`);
      await see(page, "#status", "In house");
      await see(page, "h3", "Room 103");
      await checkScreen(page, shotsDir, "24-checked-in");

      // Today again: the departure leads to its check-out; the balance comes first, then the folio
      await navLink(page, "Today").click();
      await see(page, "#in-house a", codes.arriving);
      await page.getByRole("link", { name: `Check out ${codes.departing}` }).click();
      await see(page, "h1", `Reservation ${codes.departing}`);
      await see(page, "#checkout-balance-0", "Open folio balance: 250.00 TRY");
      await page.locator("#checkout-balance-0").getByRole("link", { name: "Open the folio" }).click();
      await see(page, "h1", /^Folio \d+ · /);
      await see(page, "#charges td", "ROOM");
      expect(await page.locator("#folio-balance").innerText()).toBe("250.00 TRY");
      await page.fill("#pay-amount", "abc");
      await page.click("#pay");
      await see(page, "#pay-amount-error", "Enter an amount above zero");
      await checkScreen(page, shotsDir, "25-folio");
      // the payment by keyboard: amount, method, Enter
      await page.focus("#pay-amount");
      await page.keyboard.press("Control+A");
      await page.keyboard.type("250,00");
      await page.keyboard.press("Tab");
      expect(await activeId(page)).toBe("pay-method");
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await see(page, "#folio-done", "Payment of 250.00 TRY posted.");
      await see(page, "#folio-balance", "0.00 TRY");
      await see(page, "#payments td", "CASH");
      await checkScreen(page, shotsDir, "26-folio-paid");
      await page.getByRole("link", { name: `Back to reservation ${codes.departing}` }).click();
      await see(page, "#checkout-balance-0", "The folio is settled.");
      await page.click("#checkout-0");
      await see(page, ".confirm", "Check out room 101? The folio balance is 0.00 TRY.");
      await checkScreen(page, shotsDir, "27-check-out-confirm");
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#done", `${codes.departing}: room 101 checked out.`);
      await see(page, "#status", "Checked out");

      // the room rack: the room just left is dirty; one click makes a room clean
      await navLink(page, "Rooms").click();
      await see(page, "#room-101", "Dirty");
      expect(await page.locator("#room-101").innerText()).not.toContain("In house");
      await see(page, "#room-103 a", `In house: ${codes.arriving}`);
      await see(page, "h2", "Floor 1");
      await see(page, "h2", "Floor 2");
      await checkScreen(page, shotsDir, "28-rooms");
      await page.getByRole("button", { name: "Mark room 104 Clean" }).click();
      await see(page, "#rack-status", "Room 104: Clean");
      await see(page, "#room-104", "Clean");
      await page.reload();
      await see(page, "#room-104", "Clean");
      await see(page, "#room-101", "Dirty");
      await page.getByText("Room type", { exact: true }).click();
      await see(page, "h2", "DBL");
      // phone-sized: nothing wider than the screen
      await page.setViewportSize({ width: 375, height: 740 });
      for (const path of ["/panel/rooms", "/panel/today", "/panel/reservations", `/panel/reservations/${arrivingId}`]) {
        await page.goto(`${app.baseUrl}${path}`);
        await see(page, "h1");
        await settled(page);
        const tooWide = await page.evaluate<string[]>(
          `[...document.querySelectorAll("body *")].filter((e) => !e.closest(".table-wrap") && e.getBoundingClientRect().right > window.innerWidth + 1).map((e) => e.tagName + "." + e.className)`,
        );
        expect(tooWide, path).toEqual([]);
      }
      await page.goto(`${app.baseUrl}/panel/rooms`);
      await see(page, "#room-104");
      await checkScreen(page, shotsDir, "29-rooms-phone");
      await page.setViewportSize({ width: 1100, height: 800 });

      // rates
      await navLink(page, "Rates").click();
      await see(page, "#rate-plans td", "BAR");
      expect(await page.locator("#rate-plans").innerText()).toContain("Bed and breakfast");
      await checkScreen(page, shotsDir, "30-rates");

      // the night audit: the checks, then the run only after a confirmation naming the date it closes
      await navLink(page, "Night audit").click();
      await see(page, "#audit-date", "Closes business date 2 Mar 2027");
      await see(page, "#checks li");
      await checkScreen(page, shotsDir, "31-night-audit");
      await page.click("#run-audit");
      await see(page, ".confirm", "Close business date 2 Mar 2027? This cannot be undone.");
      await page.locator(".confirm").getByRole("button", { name: "Cancel" }).click();
      await see(page, "#run-audit");
      await page.click("#run-audit");
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#audit-done", "business date 2 Mar 2027 closed, the new business date is 3 Mar 2027");
      await see(page, "#audit-date", "Closes business date 3 Mar 2027");
      await checkScreen(page, shotsDir, "32-night-audit-done");
      await navLink(page, "Today").click();
      await see(page, "#business-date", "3 Mar 2027");

      // another property's reservation id, or a made-up one, is not found
      await page.goto(`${app.baseUrl}/panel/reservations/${newId()}`);
      await see(page, "h1", "Reservation not found");

      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 300_000);

  it("a viewer sees the front office without its actions", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "tr-TR" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400, 401, 403, 404, 409]);
    try {
      await signIn(page, viewerEmail);
      await see(page, "h1", "Bugün");
      await see(page, "#business-date");
      await page.goto(`${app.baseUrl}/panel/reservations/${arrivingId}`);
      await see(page, "h1", `Rezervasyon ${codes.arriving}`);
      expect(await page.locator("#checkin-0").count()).toBe(0);
      expect(await page.locator("#checkout-0").count()).toBe(0);
      await page.goto(`${app.baseUrl}/panel/rooms`);
      await see(page, "#room-104");
      expect(await page.locator(".rack-actions").count()).toBe(0);
      await page.goto(`${app.baseUrl}/panel/night-audit`);
      await see(page, "main p", "night_audit.run");
      expect(await page.locator("#run-audit").count()).toBe(0);
      await checkScreen(page, shotsDir, "33-viewer-night-audit");
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
