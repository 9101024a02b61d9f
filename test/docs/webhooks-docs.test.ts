import { type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventCatalogue } from "../../src/modules/events/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { launchChromium } from "../helpers/prerequisites.ts";

let app: TestApp;
let browser: Browser;
beforeAll(async () => {
  app = await startTestApp();
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe("webhooks in the API reference", () => {
  it("/openapi.json has the webhooks section and /docs lists every event type with its schema", async () => {
    const doc = (await (await fetch(`${app.baseUrl}/openapi.json`)).json()) as {
      openapi: string;
      webhooks: Record<string, unknown>;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.webhooks).sort()).toEqual(Object.keys(eventCatalogue).sort());
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    try {
      await page.goto(`${app.baseUrl}/docs`, { waitUntil: "load" });
      await page
        .locator(".opblock-summary-path", { hasText: "reservation.created" })
        .first()
        .waitFor({ timeout: 20_000 });
      const shown = await page
        .locator(".opblock-summary-path")
        .evaluateAll((els) => els.map((e) => (e.textContent ?? "").replace(/\u200b/g, "").trim()));
      for (const type of Object.keys(eventCatalogue)) expect(shown).toContain(type);
      // Opening one shows its envelope schema with the exact data fields.
      await page.locator(".opblock-summary-path", { hasText: "folio.payment_posted" }).first().click();
      await page.getByText("methodKind").first().waitFor({ timeout: 10_000 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
