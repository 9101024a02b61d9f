import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  testSecretKey,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";

// The operator's partner callbacks: `npm run ops -- client:callback` (every property granted to the client),
// `client:callbacks`, `client:callback-revoke`; and a client-wide address receives the events of each granted
// property.

const run = promisify(execFile);
let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;

async function ops(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, ["src/ops/cli.ts", ...args], {
      env: {
        ...process.env,
        DATABASE_URL: app.config.databaseUrl!,
        LOG_LEVEL: "silent",
        DATA_DIR: app.dataDir,
        WEBHOOK_SECRET_KEY: testSecretKey,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      },
      timeout: 30_000,
    });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  app = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver() } });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

describe("ops client:callback", () => {
  it("adds an address with its secret printed once, lists it without, refuses bad input, revokes it", async () => {
    const p = await createTestProperty(app, { code: "CLI-CB" });
    const partner = await createTestClient(app, { provider: "acme", propertyCodes: [p.code], scopes: ["ari.read"] });
    const internal = await createTestClient(app, { kind: "internal", propertyCodes: [p.code], scopes: ["admin"] });
    const url = "https://127.0.0.1:9443/hotelops";
    const made = await ops(
      "client:callback",
      "--client",
      partner.clientId,
      "--url",
      url,
      "--events",
      "partner_message.processed,ari.updated",
      "--json",
    );
    expect(made.code, made.stdout).toBe(0);
    const out = JSON.parse(made.stdout);
    expect(out).toMatchObject({
      clientId: partner.clientId,
      url,
      eventTypes: ["partner_message.processed", "ari.updated"],
      status: "open",
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await ops("client:callbacks", "--client", partner.clientId, "--json");
    expect(listed.stdout).not.toContain("whsec_");
    expect(JSON.parse(listed.stdout).callbacks).toEqual([
      expect.objectContaining({ callbackId: out.callbackId, url, propertyId: null }),
    ]);
    const badType = await ops("client:callback", "--client", partner.clientId, "--url", url, "--events", "nope");
    expect(badType.code).toBe(2);
    const http = await ops(
      "client:callback",
      "--client",
      partner.clientId,
      "--url",
      "http://127.0.0.1:9443/x",
      "--events",
      "ari.updated",
    );
    expect(http.code).toBe(2);
    const notPartner = await ops(
      "client:callback",
      "--client",
      internal.clientId,
      "--url",
      url,
      "--events",
      "ari.updated",
      "--json",
    );
    expect(notPartner.code).toBe(1);
    expect(JSON.parse(notPartner.stdout).error.code).toBe("not_found");
    expect((await ops("client:callback-revoke", "--client", partner.clientId, "--callback", out.callbackId)).code).toBe(
      0,
    );
    expect((await ops("client:callback-revoke", "--client", partner.clientId, "--callback", out.callbackId)).code).toBe(
      1,
    );
    expect(
      JSON.parse((await ops("client:callbacks", "--client", partner.clientId, "--json")).stdout).callbacks,
    ).toEqual([]);
  }, 120_000);

  it("a client-wide address gets the ARI of every granted property and of no other", async () => {
    const a = await createTestProperty(app, { code: "CLI-A", businessDate: "2027-01-01" });
    const b = await createTestProperty(app, { code: "CLI-B", businessDate: "2027-01-01" });
    const c = await createTestProperty(app, { code: "CLI-C", businessDate: "2027-01-01" });
    const partner = await createTestClient(app, {
      provider: "acme",
      propertyCodes: [a.code, b.code],
      scopes: ["ari.read"],
    });
    await app.parts.callbacks.create({
      clientId: partner.clientId,
      propertyId: null,
      url: receiver.url("/wide"),
      eventTypes: ["ari.updated"],
      createdBy: null,
    });
    const inv = app.services.inventory;
    for (const p of [a, b, c]) {
      const rt = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
      const rp = await inv.createRatePlan(p.id, {
        code: "BAR",
        name: "Bar",
        boardType: "ROOM_ONLY",
        roomTypeIds: [rt.id],
      });
      await inv.setPrices(p.id, {
        ratePlanId: rp.id,
        roomTypeId: rt.id,
        from: "2027-02-01",
        to: "2027-02-02",
        amountMinor: 12300n,
      });
    }
    const deadline = Date.now() + 10_000;
    const codes = () =>
      new Set(
        receiver.received
          .filter((r) => r.path === "/wide")
          .map((r) => JSON.parse(r.body) as { property: { code: string }; data: { cells: { date: string }[] } })
          .filter((x) => x.data.cells.some((cell) => cell.date === "2027-02-01"))
          .map((x) => x.property.code),
      );
    while (codes().size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1_500));
    expect([...codes()].sort()).toEqual([a.code, b.code]);
  });
});
