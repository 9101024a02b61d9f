import { readFileSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";

const CHROMIUM = "/usr/bin/chromium"; // .ci/run installs Debian's chromium when it is missing
const committed = readFileSync(new URL("../../openapi/hotelops.v1.json", import.meta.url), "utf8");

let app: TestApp;
let browser: Browser;
beforeAll(async () => {
  app = await startTestApp();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe("API reference served by the service", () => {
  it("serves the committed OpenAPI document, which documents every REST route the gateway serves", async () => {
    const res = await fetch(`${app.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const text = await res.text();
    expect(text).toBe(committed);
    const doc = JSON.parse(text) as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "{}")}`)));
    const served = app.gateway!.routes.map((r) => `${r.httpMethod} ${r.template.source.replace(/\{[^}]+\}/g, "{}")}`);
    expect(served.length).toBeGreaterThan(0);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
  });

  it("serves the page and Swagger UI's files locally, gzipped, with ETags and a strict CSP", async () => {
    const page = await fetch(`${app.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${app.baseUrl}/docs/swagger-ui-bundle.js`, { headers: { "accept-encoding": "gzip" } });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-encoding")).toBe("gzip");
    expect(await bundle.text()).toContain("SwaggerUIBundle"); // fetch decompressed it
    const plain = await fetch(`${app.baseUrl}/docs/swagger-ui.css`, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(Number(plain.headers.get("content-length"))).toBeGreaterThan(1000);
    const again = await fetch(`${app.baseUrl}/docs/swagger-ui-bundle.js`, { headers: { "if-none-match": bundle.headers.get("etag")! } });
    expect(again.status).toBe(304);
    // nothing else under /docs, and other methods fall through to the gateway
    expect((await fetch(`${app.baseUrl}/docs/../package.json`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/docs/swagger-ui-bundle.js.map`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/openapi.json`, { method: "POST" })).status).toBe(404);
  });

  it("renders in a headless browser with no console errors and no outside requests, listing the connectivity endpoints", async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const outside: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`requestfailed: ${r.url()}`));
    page.on("request", (r) => {
      if (!r.url().startsWith(app.baseUrl) && !r.url().startsWith("data:")) outside.push(r.url());
    });
    try {
      await page.goto(`${app.baseUrl}/docs`, { waitUntil: "load" });
      await page.locator('.opblock-summary-path[data-path="/api/v1/status"]').waitFor({ timeout: 20_000 });
      const paths = await page.locator(".opblock-summary-path").evaluateAll((els) => els.map((e) => e.getAttribute("data-path")));
      expect(paths).toContain("/api/v1/status");
      expect(paths).toContain("/api/v1/oauth/token");
      expect(paths.filter((p) => p?.startsWith("/api/v1/")).length).toBeGreaterThanOrEqual(2);
      expect(await page.locator(".info .title").textContent()).toContain("HotelOps API");
      await page.waitForLoadState("networkidle");
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
