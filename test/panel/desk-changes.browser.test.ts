// The desk's changes in the panel, in headless chromium against the real server: a booking's room line changed
// (room type, rate plan, guests) with the new price, availability and cancellation rule shown before the
// confirmation, the server's refusal shown as it says it, availability following the change and the cancellation;
// an invoice drafted for a named buyer, the server's refusals shown under the fields they name; a guest moved on the
// room rack (the server's refusal shown, then another room type with its prices).
// axe-core on every new screen in both languages and a screenshot of each (the folder is printed).
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CancellationFeeKind, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { newId } from "../../src/lib/ids.ts";
import type { TestApp } from "../helpers/app.ts";
import { mobileBooking, startDeskHotel } from "../helpers/desk-hotel.ts";
import { bearer, createStaffSession } from "../helpers/auth.ts";
import { seedInvoiceIssuer } from "../helpers/hotel-fixtures.ts";
import { launchChromium } from "../helpers/prerequisites.ts";
import { checkScreen, openPage, see, signInToToday } from "../helpers/panel-browser.ts";

const password = "change-pass-2026";

let app: TestApp;
let shotsDir: string;
let browser: Browser;
let hotel: { id: string; code: string };
let managerEmail: string;
let managerToken: string;
let dblId = "";
let barId = "";
const inHouse = { id: "", code: "" };

beforeAll(async () => {
  const desk = await startDeskHotel("desk-changes");
  ({ app, hotel, shotsDir } = desk);
  const { dbl, bar, rooms } = desk;
  const manager = await createStaffSession(app, { propertyCode: hotel.code, role: "manager", password });
  managerEmail = manager.email;
  managerToken = manager.accessToken;
  dblId = dbl.id;
  barId = bar.id;
  // BAR: free until 48 h before arrival, then the first night (over the contract, as an internal system would)
  await createClient(InventoryService, createGrpcTransport({ baseUrl: app.baseUrl })).setRatePlanPolicy(
    {
      propertyCode: hotel.code,
      ratePlanId: bar.id,
      policy: { freeUntilHours: 48, feeKind: CancellationFeeKind.FIRST_NIGHT, feeValue: 0n },
    },
    { headers: bearer(manager.accessToken) },
  );
  // a guest in room 101 since the first business date, which the night audit closed: the folio has a night charged
  await seedInvoiceIssuer(app.db.pool, hotel.id);
  const stay = await mobileBooking(app, manager.accessToken, {
    holderName: "Ines House",
    arrivalDate: "2027-03-01",
    departureDate: "2027-03-04",
    roomTypeId: dbl.id,
    ratePlanId: bar.id,
    totalMinor: 75000,
  });
  Object.assign(inHouse, { id: stay.id, code: stay.code });
  await app.services.reservations.checkIn(
    { propertyId: hotel.id, canOverridePrice: false },
    stay.id,
    stay.rooms[0]!.id,
    rooms["101"],
  );
  await app.services.nightAudit.run(hotel.id, "test", { expectedBusinessDate: "2027-03-01" });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

async function signIn(page: Page, email: string) {
  await signInToToday(page, app.baseUrl, { hotelCode: hotel.code, email, password });
}

/** The quote of a new booking for 5–7 March, 2 adults; the row of room type x rate plan `id` as text. */
async function quoteRow(page: Page, id: string): Promise<string> {
  await page.goto(`${app.baseUrl}/panel/reservations/new`);
  await page.fill("#new-arrival", "2027-03-05");
  await page.fill("#new-departure", "2027-03-07");
  await page.fill("#new-adults", "2");
  await page.click("#show-prices");
  await see(page, "#quotes-h");
  return page.locator(`#${id}-row`).innerText();
}

describe("the desk's changes in the panel", () => {
  it("a booking's room line is changed with its price shown first, then cancelled; availability follows", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-GB" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400]);
    try {
      await signIn(page, managerEmail);
      // created in the panel from the quote: the one suite is free
      expect(await quoteRow(page, "quote-STE-BAR")).toContain("Available");
      await page.check("#quote-DBL-BAR");
      await page.fill("#new-holder", "Lena Line");
      await page.click("#book");
      await see(page, "h1", /^Reservation R/);
      const code = (await page.locator("h1").innerText()).replace("Reservation ", "");
      const reservationUrl = page.url();
      await see(page, "#total", "500.00 TRY");

      // the line's change: the price is asked first, nothing is sent before the confirmation
      await page.click("#line-change-0");
      await see(page, "#line-type-0");
      expect(await page.locator("#line-type-0 option").allInnerTexts()).toEqual(["DBL · Double", "STE · Suite"]);
      expect(await page.locator("#line-plan-0 option").allInnerTexts()).toEqual(["BAR · BAR", "NRF · NRF"]);
      expect(await page.locator("#line-price-0").isDisabled()).toBe(true);
      // the suite: NRF does not cover it, so the plan goes back to BAR
      await page.selectOption("#line-plan-0", { label: "NRF · NRF" });
      await page.selectOption("#line-type-0", { label: "STE · Suite" });
      expect(await page.locator("#line-plan-0 option").allInnerTexts()).toEqual(["BAR · BAR"]);
      await page.click("#line-price-0");
      await see(page, "#line-new-total-0", "800.00 TRY (+300.00 TRY against now)");
      await see(page, "#line-availability-0", "Available");
      await see(page, "#line-policy-0", "Free until 48 h before arrival, then the first night");
      await checkScreen(page, shotsDir, "61-line-change-priced");
      // more guests than a suite takes: the preview says so, and the server refuses it as it words it
      await page.fill("#line-adults-0", "3");
      expect(await page.locator("#line-preview-0").count()).toBe(0);
      await page.click("#line-price-0");
      await see(page, "#line-availability-0", "More guests than the room type takes (at most 2)");
      await page.click("#line-save-0");
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(
        page,
        "#line-error-0 [role=alert]",
        "rooms[0].adults: adults + children exceed the room type's max occupancy (2)",
      );
      await checkScreen(page, shotsDir, "62-line-change-refused");
      await see(page, "#total", "500.00 TRY");

      await page.fill("#line-adults-0", "2");
      await page.click("#line-price-0");
      await see(page, "#line-new-total-0", "800.00 TRY");
      await page.click("#line-save-0");
      await see(
        page,
        ".confirm",
        "Change room line 1 to STE · BAR for 2 adult(s) and 0 child(ren)? The line then costs 800.00 TRY.",
      );
      await checkScreen(page, shotsDir, "63-line-change-confirm");
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#done", `${code}: room line 1 changed.`);
      await see(page, "#total", "800.00 TRY");
      await see(page, "h3", "STE · BAR");
      const nights = await page.locator("table.nights").first().innerText();
      expect(nights).toContain("400.00 TRY");
      // a cheaper plan of the double: the difference is a reduction
      await page.click("#line-change-0");
      await page.selectOption("#line-type-0", { label: "DBL · Double" });
      await page.selectOption("#line-plan-0", { label: "NRF · NRF" });
      await page.click("#line-price-0");
      await see(page, "#line-new-total-0", "400.00 TRY (-400.00 TRY against now)");
      await see(page, "#line-policy-0", "Free");
      // not confirmed: nothing changes
      await page.click("#line-save-0");
      await page.locator(".confirm").getByRole("button", { name: "Cancel", exact: true }).click();
      await see(page, "#total", "800.00 TRY");

      // the suite is sold out for a new booking of those nights now
      expect(await quoteRow(page, "quote-STE-BAR")).toContain("Sold out");

      // cancelled: the confirmation says what it costs (BAR is free until 48 h before arrival), the suite is free again
      await page.goto(reservationUrl);
      await page.click("#cancel-reservation");
      await see(page, ".confirm", new RegExp(`^Cancel ${code}\\? Cancelling is free until `));
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#status", "Cancelled");
      expect(await page.locator("#line-change-0").count()).toBe(0);
      expect(await quoteRow(page, "quote-STE-BAR")).toContain("Available");

      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 300_000);

  it("an invoice is drafted for a named buyer; the server's refusals show under the fields they name", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-GB" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400]);
    try {
      await signIn(page, managerEmail);
      await page.goto(`${app.baseUrl}/panel/reservations/${inHouse.id}/folio`);
      await see(page, "#charges td", "ROOM");
      await see(page, "#buyer-kind");
      // an unknown consumer by default: no name, no tax number asked
      expect(await page.locator("#buyer-name").count()).toBe(0);
      // a person: the TCKN's checksum is the server's to check, and its reason stands under the field
      await page.selectOption("#buyer-kind", "PERSON");
      await page.fill("#buyer-name", "Ines");
      await page.fill("#buyer-familyName", "House");
      await page.fill("#buyer-taxNumber", "12345678901");
      await page.click("#invoice-draft");
      await see(page, "#buyer-taxNumber-error", "not a valid TCKN (11 digits with checksum, or 11111111111)");
      expect(await page.getAttribute("#buyer-taxNumber", "aria-invalid")).toBe("true");
      await see(page, "#invoice-error [role=alert]", "buyer.tckn");
      await checkScreen(page, shotsDir, "64-invoice-buyer-refused");
      // a company: a bad VKN, then the tax office missing, each named by the server
      await page.selectOption("#buyer-kind", "COMPANY");
      await page.fill("#buyer-name", "Anadolu Turizm A.Ş.");
      await page.fill("#buyer-taxNumber", "1234567891");
      await page.click("#invoice-draft");
      await see(page, "#buyer-taxNumber-error", "not a valid VKN (10 digits with checksum)");
      await page.fill("#buyer-taxNumber", "1234567890");
      await page.click("#invoice-draft");
      await see(page, "#buyer-taxOffice-error", "is required");
      expect(await page.locator("#buyer-taxNumber-error").count()).toBe(0);
      expect(await page.getAttribute("#buyer-taxNumber", "aria-invalid")).toBe("false");
      await page.fill("#buyer-taxOffice", "Beyoğlu");
      await page.fill("#buyer-street", "İstiklal Caddesi 1");
      await page.fill("#buyer-city", "İstanbul");
      await checkScreen(page, shotsDir, "65-invoice-buyer-company");
      await page.click("#invoice-draft");
      await see(page, "#invoice-status", "Draft");
      await see(page, "#invoice-buyer", "Anadolu Turizm A.Ş. · VKN 1234567890");
      expect(await page.locator("#invoice").innerText()).toContain("E_ARSIV");
      expect(await page.locator("#buyer-kind").count()).toBe(0);
      await checkScreen(page, shotsDir, "66-invoice-buyer-draft");
      // what the panel drafted is the invoice the server keeps
      await page.reload();
      await see(page, "#invoice-buyer", "Anadolu Turizm A.Ş. · VKN 1234567890");

      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("a guest is moved on the rack: Move on the occupied room, Move here on a free one, then a confirmation", async () => {
    // a later stay holds room 102 on the night of 3 March: a move into it is refused by the server
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
      method: "POST",
      headers: { ...bearer(managerToken), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        holderName: "Otto Later",
        arrivalDate: "2027-03-03",
        departureDate: "2027-03-04",
        roomTypeId: dblId,
        ratePlanId: barId,
        roomId: (await app.services.inventory.listRooms(hotel.id)).find((r) => r.number === "102")!.id,
        adults: 1,
        totalMinor: 25000,
        currency: "TRY",
      }),
    });
    expect(res.status).toBe(201);
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-GB" });
    // Connect answers a conflict as failed_precondition (HTTP 400)
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400]);
    const code = inHouse.code;
    const moveHere = (n: string) => page.getByRole("button", { name: `Move here: room ${n} for ${code}`, exact: true });
    try {
      await signIn(page, managerEmail);
      await page.locator("nav.main-nav").getByRole("link", { name: "Rooms", exact: true }).click();
      await see(page, "#room-101 a", `In house: ${code}`);
      // only the occupied room offers Move; a dirty room is no target
      expect(await page.getByRole("button", { name: /^Move R\w+ out of room/ }).count()).toBe(1);
      await page.getByRole("button", { name: "Mark room 201 Dirty" }).click();
      await see(page, "#room-201", "Dirty");
      await page.getByRole("button", { name: `Move ${code} out of room 101` }).click();
      await see(page, "#rack-move", `Moving ${code} out of room 101`);
      expect(await moveHere("101").count()).toBe(0);
      expect(await moveHere("201").count()).toBe(0);
      await checkScreen(page, shotsDir, "67-rack-move-choose");
      // 102 is held later in the stay: the server says so, nothing moves
      await moveHere("102").click();
      await see(page, ".confirm", `Move ${code} from room 101 to room 102? Room 101 becomes dirty.`);
      expect(await page.locator("#rack-move-reprice").count()).toBe(0);
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#rack-move-error [role=alert]", /^Room 102 is assigned to reservation R\w+ between /);
      await checkScreen(page, shotsDir, "68-rack-move-refused");
      await page.locator(".confirm").getByRole("button", { name: "Cancel", exact: true }).click();
      expect(await page.locator("#rack-move").count()).toBe(0);
      await see(page, "#room-101 a", `In house: ${code}`);

      // the suite, cleaned in one click, then chosen: another type, so its prices may follow
      await page.getByRole("button", { name: "Mark room 201 Clean" }).click();
      await see(page, "#room-201", "Clean");
      await page.getByRole("button", { name: `Move ${code} out of room 101` }).click();
      await moveHere("201").click();
      await page.check("#rack-move-reprice");
      await checkScreen(page, shotsDir, "69-rack-move-confirm");
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#rack-status", `${code} moved from room 101 to room 201.`);
      await see(page, "#room-201 a", `In house: ${code}`);
      await see(page, "#room-101", "Dirty");
      expect(await page.locator("#room-101 a").count()).toBe(0);
      await page.reload();
      await see(page, "#room-201 a", `In house: ${code}`);
      await see(page, "#room-101", "Dirty");
      // the reservation: room 201, the suite's price from the business date on
      await page.getByRole("link", { name: `In house: ${code}` }).click();
      await see(page, "h3", "STE · BAR · Room 201");
      const nights = await page.locator("table.nights").first().innerText();
      expect(nights).toMatch(/1 Mar 2027\s+250\.00 TRY/);
      expect(nights).toMatch(/2 Mar 2027\s+400\.00 TRY/);

      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
