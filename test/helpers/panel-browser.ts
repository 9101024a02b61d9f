// What the panel's browser tests share: a page that records what goes wrong, axe-core, the language switch and a
// screen check (axe in both languages plus a screenshot of each).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * A page that records console errors and warnings, 5xx answers, page errors, failed requests and any request that
 * leaves `baseUrl`. Chromium logs every 4xx answer to fetch as "Failed to load resource": the statuses a flow
 * provokes on purpose are passed in `expected4xx`; any other such line is a problem.
 */
export async function openPage(context: BrowserContext, baseUrl: string, expected4xx: readonly number[]) {
  const page = await context.newPage();
  const problems: string[] = [];
  const outside: string[] = [];
  const provoked = new RegExp(
    `^Failed to load resource: the server responded with a status of (${expected4xx.join("|")}) `,
  );
  page.on("console", (m) => {
    if (expected4xx.length > 0 && provoked.test(m.text())) return;
    if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 500) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  // a request cut short by the test navigating away (page.goto) is not a failure of the app
  page.on("requestfailed", (r) => {
    if (r.failure()?.errorText !== "net::ERR_ABORTED")
      problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ""}`);
  });
  page.on("request", (r) => {
    if (!r.url().startsWith(baseUrl) && !r.url().startsWith("data:")) outside.push(r.url());
  });
  return { page, problems, outside };
}

// Evaluated in the page (CDP evaluation is not subject to the page's CSP); strings because tests have no DOM types.
async function axeSeriousOrCritical(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>(`"axe" in window`))) await page.evaluate(axeSource);
  return page.evaluate<string[]>(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => v.impact + " " + v.id + ": " + v.nodes.map((n) => n.target.join(" ")).join(", ")))`);
}

export const activeId = (page: Page) =>
  page.evaluate<string>("document.activeElement ? document.activeElement.id : ''");

export async function setLang(page: Page, lang: "tr" | "en"): Promise<void> {
  await page.selectOption("#lang", lang);
  await page.locator(`html[lang="${lang}"]`).waitFor({ state: "attached" });
}

/** axe-core on the screen in both languages and a screenshot of each into `shotsDir`; ends in English. */
export async function checkScreen(page: Page, shotsDir: string, name: string): Promise<void> {
  await settled(page);
  for (const lang of ["tr", "en"] as const) {
    await setLang(page, lang);
    expect(await axeSeriousOrCritical(page), `${name} (${lang})`).toEqual([]);
    await page.screenshot({ path: join(shotsDir, `${name}.${lang}.png`), fullPage: true });
  }
}

/**
 * The page has loaded and shows no "Loading…": the live pages keep their event stream open, so the network is
 * never idle there.
 */
export async function settled(page: Page): Promise<void> {
  await page.waitForLoadState("load");
  // a locator, not waitForFunction: the panel's CSP (script-src 'self') refuses the string a predicate is sent as
  await page
    .getByText(/Loading…|Yükleniyor…/)
    .first()
    .waitFor({ state: "detached", timeout: 20_000 });
}

/** Waits (20 s at most) for the first element matching `selector` (and `text`). */
export const see = (page: Page, selector: string, text?: string | RegExp) =>
  page
    .locator(selector, text === undefined ? {} : { hasText: text })
    .first()
    .waitFor({ timeout: 20_000 });

/** Signs in on the panel's sign-in page as `email` of hotel `hotelCode` and waits for the Today page. */
export async function signInToToday(
  page: Page,
  baseUrl: string,
  user: { hotelCode: string; email: string; password: string },
): Promise<void> {
  await page.goto(`${baseUrl}/panel/sign-in`);
  await page.fill("#hotel", user.hotelCode);
  await page.fill("#email", user.email);
  await page.fill("#password", user.password);
  await page.click("button[type=submit]");
  await page.waitForURL(/\/panel\/today$/);
}
