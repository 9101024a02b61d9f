// The panel in headless chromium against the real server: the whole Integrations flow of a property manager,
// a viewer, isolation between properties, no console errors, no outside requests, axe-core on every screen,
// and screenshots of each screen in Turkish and English (the folder is printed).
import { createHmac } from "node:crypto";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/lib/clock.ts";
import { readOutbox } from "../../src/lib/mail.ts";
import { eventCatalogue, recordEvent } from "../../src/modules/events/index.ts";
import { buildPanel } from "../../panel/build.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";
import { launchChromium } from "../helpers/prerequisites.ts";
import { activeId, checkScreen, openPage, see, setLang } from "../helpers/panel-browser.ts";

const shotsDir =
  process.env.PANEL_SCREENSHOTS_DIR ??
  join(tmpdir(), `hotelops-panel-screens-${new Date().toISOString().replace(/[:.]/g, "-")}`);
const password = "panel-pass-2026";

let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;
let browser: Browser;
const clock = new ManualClock(new Date().toISOString());
let ist: { id: string; code: string };
let ank: { id: string; code: string };
let otherHotel: { id: string; code: string };
let managerEmail: string;
let viewerEmail: string;
let foreignEndpointId: string;
let partnerClientId: string;

beforeAll(async () => {
  await buildPanel();
  mkdirSync(shotsDir, { recursive: true });
  console.log(`panel screenshots: ${shotsDir}`);
  ca = createTestCa();
  receiver = await startReceiver(ca);
  app = await startWebhookApp({
    ca,
    clock,
    webhooks: { resolver: testResolver(), random: () => 0.5, timeoutMs: 2_000, dispatch: false },
    env: {
      RATE_LIMIT_STAFF_PER_MINUTE: "100000",
      RATE_LIMIT_ANON_PER_MINUTE: "100000",
      RATE_LIMIT_AUTH_PER_MINUTE: "30",
    },
  });
  ist = await createTestProperty(app, { code: `IST-${Date.now() % 100000}` });
  ank = await createTestProperty(app, { code: `ANK-${Date.now() % 100000}`, emailVerification: true });
  otherHotel = await createTestProperty(app, { code: `OTH-${Date.now() % 100000}`, groupCode: "OTHER" });
  const manager = await createStaffSession(app, { propertyCode: ist.code, role: "manager", password });
  managerEmail = manager.email;
  await createStaffSession(app, { propertyCode: ank.code, role: "manager", email: managerEmail });
  viewerEmail = (await createStaffSession(app, { propertyCode: ist.code, role: "viewer", password })).email;
  partnerClientId = (
    await createTestClient(app, {
      provider: "acme",
      propertyCodes: [ist.code],
      scopes: ["availability.read", "reservations.read"],
      approved: true,
    })
  ).clientId;
  // an address of a property our manager has nothing to do with
  const stranger = await createStaffSession(app, { propertyCode: otherHotel.code, role: "manager" });
  const res = await fetch(`${app.baseUrl}/api/panel/v1/webhook-endpoints`, {
    method: "POST",
    headers: { ...bearer(stranger.accessToken), "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url("/stranger"), eventTypes: ["reservation.created"] }),
  });
  foreignEndpointId = ((await res.json()) as { endpoint: { id: string } }).endpoint.id;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await receiver?.close();
});

const heading = (page: Page) => page.locator("h1").first().innerText();

async function signIn(page: Page, hotel: string, email: string) {
  await page.fill("#hotel", hotel);
  await page.fill("#email", email);
  await page.fill("#password", password);
  await page.click("button[type=submit]");
}

async function emit(type: "reservation.created" | "invoice.issued", data: object): Promise<string> {
  return app.deps.transact((tx) => recordEvent(tx, { propertyId: ist.id, type, occurredAt: clock.now(), data }));
}

const sign = (secret: string, t: string, body: string) =>
  createHmac("sha256", Buffer.from(secret, "utf8")).update(`${t}.${body}`).digest("hex");
function signedWith(secret: string, got: { headers: Record<string, unknown>; body: string }): boolean {
  const parts = String(got.headers["service-signature"]).split(",");
  const t = parts.find((p) => p.startsWith("t="))!.slice(2);
  return parts.filter((p) => p.startsWith("v1=")).some((p) => p.slice(3) === sign(secret, t, got.body));
}

describe("the panel at /panel", () => {
  it("is served compressed with hashed, long-cached assets and a strict CSP; every /panel path is the app", async () => {
    const page = await fetch(`${app.baseUrl}/panel/webhooks/anything`, { headers: { "accept-encoding": "br, gzip" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    const js = /src="(\/panel\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${app.baseUrl}${js}`, { headers: { "accept-encoding": "br" } });
    expect(asset.headers.get("content-encoding")).toBe("br");
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const brBytes = Number(asset.headers.get("content-length"));
    const gz = await fetch(`${app.baseUrl}${js}`, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    const plain = await fetch(`${app.baseUrl}${js}`, { headers: { "accept-encoding": "identity" } });
    const plainBytes = Number(plain.headers.get("content-length"));
    expect(brBytes).toBeLessThan(plainBytes / 3);
    console.log(
      `panel script: ${plainBytes} bytes, ${brBytes} with brotli, ${gz.headers.get("content-length")} with gzip`,
    );
    expect(
      (await fetch(`${app.baseUrl}${js}`, { headers: { "if-none-match": asset.headers.get("etag")! } })).status,
    ).toBe(304);
    expect((await fetch(`${app.baseUrl}/panel/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/panel`, { method: "POST" })).status).toBe(405);
  });

  it("a manager signs in (keyboard only, then with the e-mail code), manages a webhook address end to end, and is told when it closes", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-GB" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400, 401, 404, 429]);
    try {
      // sign in without an e-mail code, by keyboard only: skip link, then the fields in order
      await page.goto(`${app.baseUrl}/panel`);
      await page.waitForURL(/\/panel\/sign-in$/);
      await see(page, "h1", "Sign in");
      await checkScreen(page, shotsDir, "01-sign-in");
      // the page starts with the heading focused; the skip link is the first stop from the top
      await page.reload();
      await see(page, "h1", "Sign in");
      expect(await page.evaluate<string>("document.activeElement.tagName")).toBe("H1");
      await page.keyboard.press("Tab");
      expect(await activeId(page)).toBe("hotel");
      await page.keyboard.type(ist.code);
      await page.keyboard.press("Tab");
      await page.keyboard.type(managerEmail);
      await page.keyboard.press("Tab");
      await page.keyboard.type(password);
      await page.keyboard.press("Enter");
      // the front office's Today comes first; Integrations is one link of the navigation
      await page.waitForURL(/\/panel\/today$/);
      await page.locator("nav").getByRole("link", { name: "Integrations", exact: true }).click();
      await page.waitForURL(/\/panel\/api-access$/);

      // API access: status, partner clients, docs
      await see(page, "#api-status", "Operational");
      await see(page, "td", "acme");
      expect(await page.locator("main").innerText()).toContain("v1 beta");
      expect(await page.locator("main").innerText()).toContain(partnerClientId);
      await checkScreen(page, shotsDir, "02-api-access");

      // a reload keeps the session (same tab)
      await page.reload();
      await see(page, "#api-status", "Operational");

      // sign out, then sign in to the property that asks for an e-mail code
      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      await see(page, ".notice", "signed out");
      await signIn(page, ank.code, managerEmail);
      await see(page, "h1", "Enter the e-mail code");
      await checkScreen(page, shotsDir, "03-email-code");
      const mail = await until(async () => (await readOutbox(app.dataDir)).filter((m) => m.to === managerEmail).at(-1));
      await page.fill("#code", /\b(\d{6})\b/.exec(mail.text)![1]!);
      await page.click("button[type=submit]");
      await page.waitForURL(/\/panel\/today$/);
      await page.locator("nav").getByRole("link", { name: "Integrations", exact: true }).click();
      await page.waitForURL(/\/panel\/api-access$/);
      expect(await page.locator("#property option:checked").innerText()).toContain(ank.code);

      // switch the active property to the other hotel (re-issued tokens, same session)
      await page.selectOption("#property", ist.id);
      await see(page, "td", "acme");

      // webhook addresses: empty list, the limit explained
      await page.locator("nav").getByRole("link", { name: "Webhook addresses" }).click();
      await see(page, "#limit", "0 of 10");
      await checkScreen(page, shotsDir, "04-webhooks-empty");
      await page.getByRole("link", { name: "Add address" }).click();
      await see(page, "h1", "New webhook address");
      await see(page, "label", "reservation.created");
      await checkScreen(page, shotsDir, "05-create-form");
      // what each type means comes from the server's event catalogue, in the panel's language
      const described = () => page.locator("#ev-reservation\\.created-d").innerText();
      expect(await described()).toBe(eventCatalogue["reservation.created"].summary);
      await setLang(page, "tr");
      await see(page, "#ev-reservation\\.created-d", eventCatalogue["reservation.created"].summaryTr);
      await setLang(page, "en");
      await see(page, "#ev-reservation\\.created-d", eventCatalogue["reservation.created"].summary);

      // checked in the browser like the server checks it, then the server's own reason on refusal
      await page.fill("#url", "http://receiver.test/hook");
      await page.check("#ev-reservation\\.created");
      await page.click("button[type=submit]");
      await see(page, "#url-error", "https://");
      await page.fill("#url", "https://169.254.169.254:8443/hook");
      await page.click("button[type=submit]");
      await see(page, "#url-error", "non-public address");
      await see(page, ".error", /Request id/);
      await checkScreen(page, shotsDir, "06-create-refused");

      // created: the secret once, copy-able, with the warning
      await page.fill("#url", receiver.url("/hook"));
      await page.check("#ev-invoice\\.issued");
      await page.fill("#description", "Channel manager");
      await page.click("button[type=submit]");
      await see(page, "#secret-value");
      const secret = await page.inputValue("#secret-value");
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(await page.locator(".secret").innerText()).toContain("you will not see this secret again");
      await checkScreen(page, shotsDir, "07-secret-once");
      await page.getByRole("button", { name: "I have stored the secret", exact: true }).click();
      await page.waitForURL(/\/panel\/webhooks\/[0-9a-f-]{36}$/);
      const endpointId = page.url().split("/").at(-1)!;
      await page.reload();
      await see(page, "#endpoint-status", "Open");
      expect(await page.content()).not.toContain(secret);

      // the connection-verify button: webhook.test, answered at once
      const before = receiver.received.length;
      await page.getByRole("button", { name: "Test connection", exact: true }).click();
      await see(page, "#action-result", /HTTP 204 in \d+ ms/);
      const test = (await receiver.waitFor(before + 1))[before]!;
      expect(test.headers["service-event-type"]).toBe("webhook.test");
      expect(signedWith(secret, test)).toBe(true);

      // a real delivery appears in the history; filters; resend with the same event id
      const eventId = await emit("reservation.created", { id: "r-1", code: "R-1" });
      await receiver.waitFor(before + 2);
      await page.getByRole("button", { name: "Refresh", exact: true }).click();
      await see(page, "#history td", "reservation.created");
      await page.selectOption("#filter-event", "reservation.created");
      await page.selectOption("#filter-status", "SUCCEEDED");
      await until(async () => ((await page.locator("#history tbody tr").count()) === 1 ? true : undefined));
      expect(await page.locator("#history tbody tr").innerText()).toMatch(/reservation\.created\s+1\s+204\s+\d+ ms/);
      await checkScreen(page, shotsDir, "08-history");
      await page.selectOption("#filter-status", "FAILED");
      await see(page, "main p", "No delivery matches");
      await page.selectOption("#filter-status", "");
      await page
        .locator("#history")
        .getByRole("button", { name: /^Resend reservation\.created/ })
        .click();
      await see(page, "#resend-result", /Resent: HTTP 204 in \d+ ms/);
      const resent = (await receiver.waitFor(before + 3))[before + 2]!;
      expect(resent.headers["service-event-id"]).toBe(eventId);
      await see(page, "#history tbody tr:nth-child(2)");

      // rotate: the new secret once, the 24 h overlap explained; deliveries carry both signatures
      await page.getByRole("button", { name: "Rotate secret", exact: true }).click();
      await see(page, ".confirm", "24 hours");
      await until(async () => ((await activeId(page)) === "confirm-yes" ? true : undefined)); // the confirmation takes focus
      await page.keyboard.press("Enter");
      await see(page, "#secret-value");
      const rotated = await page.inputValue("#secret-value");
      expect(rotated).not.toBe(secret);
      expect(await page.locator(".secret").innerText()).toMatch(/24 hours/);
      await checkScreen(page, shotsDir, "09-rotated");
      await page.getByRole("button", { name: "I have stored the secret", exact: true }).click();
      await emit("invoice.issued", { invoiceId: "i-1" });
      const both = (await receiver.waitFor(before + 4))[before + 3]!;
      expect(signedWith(rotated, both) && signedWith(secret, both)).toBe(true);

      // the receiver refuses for more than 24 hours: the address closes (injected clock moved by the test)
      receiver.behave((_req, res) => {
        res.writeHead(500);
        res.end();
      });
      await emit("invoice.issued", { invoiceId: "i-2" });
      await until(async () =>
        (await deliveriesOf(endpointId)).some((d) => d.status === "pending" && d.last_error_class !== null)
          ? true
          : undefined,
      );
      for (let i = 0; i < 10; i++) {
        const d = (await deliveriesOf(endpointId)).find((x) => x.status === "pending");
        if (d === undefined) break;
        clock.set(d.next_attempt_at);
        await app.parts.engine.runDue();
      }
      clock.advance(90 * 60_000);
      await emit("invoice.issued", { invoiceId: "i-3" });
      await until(async () =>
        (await app.deps.db.pool.query("select status from webhook_endpoints where id = $1", [endpointId])).rows[0]
          ?.status === "closed"
          ? true
          : undefined,
      );

      // the bell counts it; the notice links to the address (the session refreshed itself across the clock jump)
      await page.reload();
      await see(page, "#endpoint-status", "Closed");
      await see(page, "#closed-banner", "24 hours");
      await see(page, ".bell[aria-label='Notifications, 1 unread']");
      expect(await page.locator("#history").innerText()).toContain("http_status");
      await checkScreen(page, shotsDir, "10-closed");
      await page.click(".bell");
      await see(page, ".notes li.unread", "Webhook address closed");
      await checkScreen(page, shotsDir, "11-notifications");
      await page.getByRole("button", { name: "Mark read", exact: true }).click();
      await see(page, ".bell[aria-label='Notifications, 0 unread']");
      await page.getByRole("link", { name: "Open the address" }).click();
      await page.waitForURL(new RegExp(`/panel/webhooks/${endpointId}$`));

      // re-enable: open again; events flow
      receiver.behave((_req, res) => {
        res.writeHead(204);
        res.end();
      });
      await page.getByRole("button", { name: "Re-enable", exact: true }).click();
      await see(page, "#endpoint-status", "Open");
      const n = receiver.received.length;
      await emit("reservation.created", { id: "r-2" });
      await receiver.waitFor(n + 1);

      // disable, then delete
      await page.getByRole("button", { name: "Disable", exact: true }).click();
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await see(page, "#endpoint-status", "Disabled");
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      await page.locator(".confirm").getByRole("button", { name: "Confirm" }).click();
      await page.waitForURL(/\/panel\/webhooks$/);
      await see(page, "#limit", "0 of 10");

      // isolation: another property's address id in the URL is simply not found
      await page.goto(`${app.baseUrl}/panel/webhooks/${foreignEndpointId}`);
      await see(page, "h1", "Webhook address not found");
      await checkScreen(page, shotsDir, "12-not-found");

      // phone-sized: nothing wider than the screen, every control reachable
      await page.setViewportSize({ width: 375, height: 740 });
      for (const path of ["/panel/api-access", "/panel/webhooks", "/panel/webhooks/new", "/panel/notifications"]) {
        await page.goto(`${app.baseUrl}${path}`);
        await see(page, "h1");
        await page.waitForLoadState("networkidle");
        const tooWide = await page.evaluate<string[]>(
          `[...document.querySelectorAll("body *")].filter((e) => !e.closest(".table-wrap") && e.getBoundingClientRect().right > window.innerWidth + 1).map((e) => e.tagName + "." + e.className)`,
        );
        expect(tooWide, path).toEqual([]);
        expect(await page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth"), path).toBe(
          true,
        );
      }
      await checkScreen(page, shotsDir, "13-phone-notifications");
      await page.goto(`${app.baseUrl}/panel/webhooks`);
      await see(page, "h1", "Webhook addresses");
      await checkScreen(page, shotsDir, "14-phone-webhooks");

      // the session's absolute end (30 days): back to sign-in with the reason
      clock.advance(31 * 24 * 3600_000);
      await page.reload();
      await see(page, ".notice", "session has ended");
      expect(await heading(page)).toBe("Sign in to the panel");

      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it("a viewer signs in and is told why Integrations are not available", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "tr-TR" });
    const { page, problems, outside } = await openPage(context, app.baseUrl, [400, 401, 404, 429]);
    try {
      await page.goto(`${app.baseUrl}/panel/sign-in`);
      await see(page, "h1", "Panele giriş");
      await signIn(page, ist.code, viewerEmail);
      await see(page, "h1", "Bugün");
      await page.locator("nav").getByRole("link", { name: "Entegrasyonlar", exact: true }).click();
      await see(page, "h1", "Entegrasyonlar sizin için kullanılamıyor");
      expect(await page.locator("main").innerText()).toContain("integrations.manage");
      await page.goto(`${app.baseUrl}/panel/webhooks/${foreignEndpointId}`);
      await see(page, "h1", "Entegrasyonlar sizin için kullanılamıyor");
      await checkScreen(page, shotsDir, "15-viewer");
      await page.locator("nav").getByRole("link", { name: "Notifications" }).click();
      await see(page, "h1", "Notifications");

      // signed out, wrong passwords until the login limit: 429 says when to retry (the last step: it spends this IP's logins)
      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      for (let i = 0; i < 40; i++) {
        await page.fill("#hotel", ist.code);
        await page.fill("#email", viewerEmail);
        await page.fill("#password", "wrong-password");
        await page.click("button[type=submit]");
        await see(page, ".error");
        if (/try again in \d+ seconds/.test(await page.locator(".error").innerText())) break;
      }
      expect(await page.locator(".error").innerText()).toMatch(/Too many requests: try again in \d+ seconds/);
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});

async function deliveriesOf(endpointId: string) {
  return (
    await app.deps.db.pool.query<{
      id: string;
      status: string;
      attempts: number;
      next_attempt_at: Date;
      last_error_class: string | null;
    }>(
      "select id, status, attempts, next_attempt_at, last_error_class from webhook_deliveries where endpoint_id = $1 order by created_at, id",
      [endpointId],
    )
  ).rows;
}

async function until<T>(probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}
