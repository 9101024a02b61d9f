import { readFileSync } from "node:fs";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/ops/seed.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient } from "../helpers/auth.ts";
import { launchChromium } from "../helpers/prerequisites.ts";

const committed = readFileSync(new URL("../../openapi/hotelops.v1.json", import.meta.url), "utf8");

let app: TestApp;
let browser: Browser;
let demoClient: { clientId: string; clientSecret: string };
beforeAll(async () => {
  app = await startTestApp();
  const seed = await seedDemo(app.deps, app.services.admin); // the documented examples use the demo hotel
  demoClient = seed.client!;
  browser = await launchChromium();
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
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "{}")}`),
      ),
    );
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
    const again = await fetch(`${app.baseUrl}/docs/swagger-ui-bundle.js`, {
      headers: { "if-none-match": bundle.headers.get("etag")! },
    });
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
      const paths = await page
        .locator(".opblock-summary-path")
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-path")));
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

/** Opens an operation of /docs, fills nothing (the documented example is used), executes it and returns the answer. */
async function tryItOut(page: Page, method: string, path: string): Promise<{ status: string; body: string }> {
  const block = page
    .locator(`.opblock-${method}`)
    .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });
  await block.locator(".opblock-summary").first().click();
  await block.locator("button.try-out__btn").click();
  await block.locator("button.execute").click();
  const row = block.locator(".live-responses-table tr.response").first();
  await row.waitFor({ timeout: 20_000 });
  const status = row.locator(".response-col_status");
  const body = (await row.locator(".response-col_description .highlight-code pre").first().textContent()) ?? "";
  return { status: ((await status.textContent()) ?? "").trim(), body };
}

async function authorize(page: Page, scheme: string, token: string): Promise<void> {
  await page.locator(".auth-wrapper button.authorize").click();
  const section = page.locator(".modal-ux .auth-container").filter({ hasText: scheme });
  await section.locator("input").first().fill(token);
  await section.locator("button.authorize").click();
  await page.locator(".modal-ux button.btn-done").first().click();
}

describe("API reference for each audience", () => {
  it("groups operations by audience with readable summaries, real examples and no internal notes", async () => {
    const doc = JSON.parse(committed) as {
      tags: { name: string }[];
      paths: Record<
        string,
        Record<
          string,
          {
            summary: string;
            operationId: string;
            tags: string[];
            requestBody?: { content: Record<string, { example?: unknown }> };
          }
        >
      >;
    };
    expect(doc.tags.map((t) => t.name)).toEqual(["Partner API", "Mobile API", "Panel", "Internal"]);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops)) {
        expect(op.tags).toEqual([
          path.startsWith("/api/mobile/")
            ? "Mobile API"
            : path.startsWith("/api/panel/")
              ? "Panel"
              : path.startsWith("/api/admin/")
                ? "Internal"
                : "Partner API",
        ]);
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {}))
          if (type !== "multipart/form-data") expect(media.example, op.operationId).toBeDefined();
      }
    }
    const summaries = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.summary));
    expect(summaries).toEqual(
      expect.arrayContaining([
        "API status",
        "Get an access token (client credentials)",
        "Switch the partner API on or off",
        "Send a reservation event (new, modified, cancelled)",
      ]),
    );
    // no RPC names turned into words ("Set partner api", "Get mobile reservation", "Create reservation event")
    expect(
      summaries.filter((t) =>
        /^(Set partner api|Get mobile reservation|Create reservation event|Get capabilities)$/.test(t),
      ),
    ).toEqual([]);
    expect(committed).not.toMatch(/CONTRACT\.md|Layout:|\bspec\b|spec's|README "/);

    const page = await browser.newPage();
    try {
      await page.goto(`${app.baseUrl}/docs`, { waitUntil: "load" });
      await page.locator(".opblock-tag").first().waitFor({ timeout: 20_000 });
      const sections = await page
        .locator(".opblock-tag")
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-tag")));
      expect(sections).toEqual(["Partner API", "Mobile API", "Panel", "Internal"]);
      expect(
        await page
          .locator('.opblock-summary-path[data-path="/api/v1/status"] ~ .opblock-summary-description')
          .textContent(),
      ).toBe("API status");
    } finally {
      await page.close();
    }
  }, 60_000);

  it("Try it out sends a pasted partner token to partner endpoints, the staff token of the login example to mobile ones, a fetched client-credentials token to internal ones", async () => {
    const partner = await createTestClient(app, {
      propertyCodes: ["DEMO-IST"],
      scopes: ["availability.read", "reservations.read"],
    });
    const page = await browser.newPage();
    try {
      await page.goto(`${app.baseUrl}/docs`, { waitUntil: "load" });
      await page.locator(".opblock-tag").first().waitFor({ timeout: 20_000 });

      expect((await tryItOut(page, "get", "/api/v1/capabilities")).status).toBe("401");
      await authorize(page, "clientToken", partner.accessToken);
      const capabilities = await tryItOut(page, "get", "/api/v1/properties/{propertyCode}/availability");
      expect(capabilities.status).toBe("200");
      expect(capabilities.body).toContain('"propertyCode": "DEMO-IST"');

      // the login example is the demo manager: executing it as documented signs in
      const login = await tryItOut(page, "post", "/api/mobile/v1/auth/login");
      expect(login.status).toBe("200");
      const accessToken = (JSON.parse(login.body) as { tokens: { accessToken: string } }).tokens.accessToken;
      await authorize(page, "staffSession", accessToken);
      const dashboard = await tryItOut(page, "get", "/api/mobile/v1/dashboard");
      expect(dashboard.status).toBe("200");
      expect(dashboard.body).toContain("businessDate");

      // internal: the page fetches a client-credentials token itself (id and secret in the Authorize dialog);
      // a fresh page, so the partner token pasted above is not sent too
      await page.goto(`${app.baseUrl}/docs`, { waitUntil: "load" });
      await page.locator(".opblock-tag").first().waitFor({ timeout: 20_000 });
      await page.locator(".auth-wrapper button.authorize").click();
      const oauth = page.locator(".modal-ux .auth-container").filter({ hasText: "clientCredentials" });
      await oauth.locator('input[id^="client_id_"]').fill(demoClient.clientId);
      await oauth.locator('input[id^="client_secret_"]').fill(demoClient.clientSecret);
      await oauth.locator("button.authorize").click();
      await oauth.getByText("Authorized").first().waitFor({ timeout: 20_000 });
      await page.locator(".modal-ux button.btn-done").first().click();
      const clients = await tryItOut(page, "get", "/api/admin/v1/clients");
      expect(clients.status).toBe("200");
      expect(clients.body).toContain(demoClient.clientId);
    } finally {
      await page.close();
    }
  }, 90_000);
});
