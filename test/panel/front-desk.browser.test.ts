// The front desk's actions in the panel, in headless chromium against the real server: a reservation made from the
// quote the mobile API gives (restrictions explained, the server's refusal shown as it says it, a price override by
// a manager only), changed, checked in, moved to another room, its guests attached (a profile found by document
// number, the identity scan, the occupancy the server enforces), a payment reversed, an invoice drafted, finalised
// and its e-document downloaded as XML and PDF, and a cancellation whose fee is shown before the confirmation.
// axe-core on every new screen in both languages and a screenshot of each (the folder is printed).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GuestService } from "../../gen/hotelops/guest/v1/guest_pb.js";
import { CancellationFeeKind, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import type { TestApp } from "../helpers/app.ts";
import { mobileBooking, startDeskHotel } from "../helpers/desk-hotel.ts";
import { bearer, createStaffSession } from "../helpers/auth.ts";
import { seedInvoiceIssuer } from "../helpers/hotel-fixtures.ts";
import { launchChromium } from "../helpers/prerequisites.ts";
import { checkScreen, openPage, see, signInToToday } from "../helpers/panel-browser.ts";

const password = "desk-pass-2026";
const passportPhoto = fileURLToPath(new URL("../fixtures/identity/passport-td3.jpg", import.meta.url));

let app: TestApp;
let shotsDir: string;
let browser: Browser;
let hotel: { id: string; code: string };
let managerEmail: string;
let deskEmail: string;
const stays = { fee: { id: "", code: "" }, free: { id: "", code: "" } };

beforeAll(async () => {
  const desk = await startDeskHotel("front-desk");
  ({ app, hotel, shotsDir } = desk);
  const { dbl, bar, nrf } = desk;
  await seedInvoiceIssuer(app.db.pool, hotel.id);
  const manager = await createStaffSession(app, { propertyCode: hotel.code, role: "manager", password });
  managerEmail = manager.email;
  deskEmail = (await createStaffSession(app, { propertyCode: hotel.code, role: "front_desk", password })).email;
  // over the contract, as an internal system or the mobile app would: BAR's cancellation costs the first night from
  // a year before arrival on (so always, here), NRF is closed to arrival on 5 March, one guest profile exists
  const grpc = createGrpcTransport({ baseUrl: app.baseUrl });
  const opts = { headers: bearer(manager.accessToken) };
  await createClient(InventoryService, grpc).setRatePlanPolicy(
    {
      propertyCode: hotel.code,
      ratePlanId: bar.id,
      policy: { freeUntilHours: 8784, feeKind: CancellationFeeKind.FIRST_NIGHT, feeValue: 0n },
    },
    opts,
  );
  await createClient(InventoryService, grpc).setRestrictions(
    { propertyCode: hotel.code, ratePlanIds: [nrf.id], from: "2027-03-05", to: "2027-03-06", closedToArrival: true },
    opts,
  );
  await createClient(GuestService, grpc).createGuest(
    { givenName: "Jane", familyName: "Roe", nationality: "GB", documentType: "PASSPORT", documentNumber: "X1234567" },
    opts,
  );
  const mobileCreate = (holderName: string, ratePlanId: string, nightly: number) =>
    mobileBooking(app, manager.accessToken, {
      holderName,
      arrivalDate: "2027-03-10",
      departureDate: "2027-03-12",
      roomTypeId: dbl.id,
      ratePlanId,
      totalMinor: nightly * 2,
    });
  stays.fee = await mobileCreate("Carl Fee", bar.id, 25000);
  stays.free = await mobileCreate("Fay Free", nrf.id, 20000);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

async function signIn(page: Page, email: string) {
  await signInToToday(page, app.baseUrl, { hotelCode: hotel.code, email, password });
}

async function quote(page: Page, arrival: string, departure: string) {
  await page.fill("#new-arrival", arrival);
  await page.fill("#new-departure", departure);
  await page.fill("#new-adults", "2");
  await page.click("#show-prices");
  await see(page, "#quotes-h");
}

describe("the front desk in the panel", () => {
  it("a manager books from the quote, changes, checks in, moves, attaches guests, reverses a payment, invoices and cancels", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-GB" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400, 404, 409, 422]);
    try {
      await signIn(page, managerEmail);
      await page.locator("nav.main-nav").getByRole("link", { name: "Reservations", exact: true }).click();
      await page.click("#new-reservation");
      await see(page, "h1", "New reservation");
      await checkScreen(page, shotsDir, "41-new-reservation");

      // the quote of the mobile API, each row with its restrictions, cancellation rule and availability
      await quote(page, "2027-03-05", "2027-03-07");
      const rows = await page.locator("#quotes tbody tr").allInnerTexts();
      expect(rows).toHaveLength(3);
      const row = (id: string) => page.locator(`#${id}-row`).innerText();
      expect(await row("quote-DBL-BAR")).toContain("500.00 TRY");
      expect(await row("quote-DBL-BAR")).toContain("Free until 8784 h before arrival, then the first night");
      expect(await row("quote-DBL-NRF")).toContain("400.00 TRY");
      expect(await row("quote-DBL-NRF")).toContain("Closed to arrival on 5 Mar 2027");
      expect(await row("quote-STE-BAR")).toContain("800.00 TRY");
      await checkScreen(page, shotsDir, "42-quotes");
      // booking the restricted one anyway: the server's refusal, as it words it
      await page.check("#quote-DBL-NRF");
      await page.fill("#new-holder", "Rita Restricted");
      await page.click("#book");
      await see(
        page,
        "#create-error [role=alert]",
        "The stay breaks a restriction: closed_to_arrival: DBL/NRF takes no arrival on 2027-03-05.",
      );
      await checkScreen(page, shotsDir, "43-create-refused");

      // today's arrival at another price (a manager may override it)
      await quote(page, "2027-03-01", "2027-03-03");
      await page.check("#quote-DBL-BAR");
      await page.fill("#new-holder", "Olga Override");
      await page.check("#new-override");
      await page.fill("#new-price", "450,00");
      await page.click("#book");
      await see(page, "h1", /^Reservation R/);
      await see(page, "#total", "450.00 TRY");
      expect(await page.locator("#holder").innerText()).toBe("Olga Override");

      // modify: a bad range is the server's error; then the holder and one more night
      await page.click("#change-open");
      await page.fill("#edit-departure", "2027-02-27");
      await page.click("#save-change");
      await see(page, "#change-error [role=alert]");
      await checkScreen(page, shotsDir, "44-change-refused");
      await page.fill("#edit-holder", "Olga Changed");
      await page.fill("#edit-departure", "2027-03-04");
      await page.click("#save-change");
      await see(page, "#holder", "Olga Changed");
      await see(page, "#stay", "3 night(s)");
      expect(await page.locator("#done").innerText()).toMatch(/^R\w+ changed\.$/);

      // check in to 101, then move to the suite 201 (another type: the price can follow it)
      await page.click("#checkin-0");
      await see(page, "h3", "Room 101");
      await see(page, "#move-room-0");
      expect(await page.locator("#move-room-0 option").allInnerTexts()).toEqual(["Room 102: Clean", "Room 201: Clean"]);
      await page.selectOption("#move-room-0", { label: "Room 201: Clean" });
      await see(page, "label", "Charge the new room type's prices");
      await page.click("#move-0");
      await see(page, "#done", "moved from room 101 to room 201");
      await see(page, "h3", "Room 201");
      await checkScreen(page, shotsDir, "45-moved");

      // guests: the identity scan read, compared, saved; a profile found by its document number; the third is
      // refused by the server (two adults)
      await page.getByText("Scan an identity document").click();
      await page.setInputFiles("#scan-files-0", passportPhoto);
      await page.click("#scan-read-0");
      await see(page, "#scan-result-0", "Every check holds");
      await checkScreen(page, shotsDir, "46-scan-read");
      await page.click("#scan-save-0");
      await see(page, "#done", "saved as this room's guest");
      await page.fill("#guest-search-0", "X1234567");
      await page.click("#guest-find-0");
      await see(page, "#guest-found-0", "Jane Roe");
      await page.getByRole("button", { name: "Add Jane Roe to this room" }).click();
      await see(page, "#done", "Jane Roe added to 201.");
      await see(page, "#guests-0 li", "Jane Roe");
      await page.getByText("New guest", { exact: true }).click();
      await page.fill("#g-given-0", "Max");
      await page.fill("#g-family-0", "Mustermann");
      await page.fill("#g-nat-0", "de");
      await page.fill("#g-docnum-0", "C01X00T47");
      await page.click("#guest-create-0");
      await see(page, "#guest-error-0 [role=alert]");
      expect(await page.locator("#guests-0 > ul li").count()).toBe(2);
      await checkScreen(page, shotsDir, "47-guests");

      // the folio: a payment, then its reversal after a confirmation naming the amount
      await page.locator("main").getByRole("link", { name: "Open the folio" }).first().click();
      await see(page, "h1", /^Folio /);
      await page.fill("#pay-amount", "100,00");
      await page.click("#pay");
      await see(page, "#folio-done", "Payment of 100.00 TRY posted.");
      await page.getByRole("button", { name: "Reverse the payment of 100.00 TRY" }).click();
      await see(page, ".confirm", "Reverse this payment? 100.00 TRY goes back to the guest.");
      await checkScreen(page, shotsDir, "48-reverse-confirm");
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#folio-done", "Payment reversed: 100.00 TRY back to the guest.");
      await see(page, "#payments td", "reversal");
      expect(await page.getByRole("button", { name: /^Reverse the payment/ }).count()).toBe(0);
      await see(page, "#folio-balance", "0.00 TRY");

      // nothing charged yet: the server says there is nothing to invoice; after the night audit there is
      await page.click("#invoice-draft");
      await see(page, "#invoice-error [role=alert]");
      await app.services.nightAudit.run(hotel.id, "test", { expectedBusinessDate: "2027-03-01" });
      await page.reload();
      await see(page, "#charges td", "ROOM");
      await page.click("#invoice-draft");
      await see(page, "#invoice-status", "Draft");
      expect(page.url()).toMatch(/\?invoice=[0-9a-f-]{36}$/);
      await checkScreen(page, shotsDir, "49-invoice-draft");
      await page.click("#invoice-finalise");
      await see(page, ".confirm", /^Issue this invoice of [\d,.]+ TRY\?/);
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#invoice-status", "Issued");
      const number = await page.locator("#invoice-number").innerText();
      expect(number).toMatch(/^[A-Z0-9]{3}2027\d{9}$/);
      await checkScreen(page, shotsDir, "50-invoice-issued");
      for (const [button, ext, head] of [
        ["#invoice-xml", "xml", "<?xml"],
        ["#invoice-pdf", "pdf", "%PDF"],
      ] as const) {
        const [download] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
        expect(download.suggestedFilename()).toBe(`${number}.${ext}`);
        const saved = join(shotsDir, download.suggestedFilename());
        await download.saveAs(saved);
        expect(readFileSync(saved).subarray(0, head.length).toString("latin1")).toBe(head);
      }
      // the invoice in hand survives a reload (it is in the address)
      await page.reload();
      await see(page, "#invoice-number", number);

      // cancelling: the fee is shown before the confirmation (BAR: the first night), or that it is free (NRF)
      await page.goto(`${app.baseUrl}/panel/reservations/${stays.fee.id}`);
      await page.click("#cancel-reservation");
      await see(
        page,
        ".confirm",
        `Cancel ${stays.fee.code}? The cancellation fee of 250.00 TRY is posted to the folio.`,
      );
      await checkScreen(page, shotsDir, "51-cancel-confirm");
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#status", "Cancelled");
      await see(page, "#done", `${stays.fee.code} cancelled.`);
      expect(await page.locator("#cancel-reservation").count()).toBe(0);
      await page.locator("main").getByRole("link", { name: "Open the folio" }).first().click();
      await see(page, "#charges td", "CANCELLATION_FEE");
      await page.goto(`${app.baseUrl}/panel/reservations/${stays.free.id}`);
      await page.click("#cancel-reservation");
      await see(page, ".confirm", `Cancel ${stays.free.code}? Cancelling is free.`);
      await page.locator(".confirm").getByRole("button", { name: "Cancel", exact: true }).click();
      await see(page, "#status", "Guaranteed");

      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 300_000);

  it("the front desk books without a price override and the folio without invoicing", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "tr-TR" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, []);
    try {
      await signIn(page, deskEmail);
      await page.goto(`${app.baseUrl}/panel/reservations/new`);
      await see(page, "h1", "Yeni rezervasyon");
      await quote(page, "2027-03-12", "2027-03-13");
      await see(page, "#quotes td", "Müsait");
      expect(await page.locator("#new-override").count()).toBe(0);
      // phone-sized: the form and the quotes fit (a table scrolls in its own region)
      await page.setViewportSize({ width: 375, height: 740 });
      const tooWide = await page.evaluate<string[]>(
        `[...document.querySelectorAll("main *")].filter((e) => !e.closest(".table-wrap") && e.getBoundingClientRect().right > window.innerWidth + 1).map((e) => e.tagName + "#" + e.id)`,
      );
      expect(tooWide).toEqual([]);
      await page.screenshot({ path: join(shotsDir, "52-new-reservation-phone.tr.png"), fullPage: true });
      await page.setViewportSize({ width: 1100, height: 800 });
      await page.check("#quote-DBL-BAR");
      await page.fill("#new-holder", "Deniz Masa");
      await page.click("#book");
      await see(page, "h1", /^Rezervasyon R/);
      await see(page, "#total", "250,00 TRY");
      await page.locator("main").getByRole("link", { name: "Folyoyu aç" }).first().click();
      await see(page, "h1", /^Folyo /);
      expect(await page.locator("#invoice-draft").count()).toBe(0);
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
