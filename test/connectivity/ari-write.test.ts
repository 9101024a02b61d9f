import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { seedDemo } from "../../src/ops/seed.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

// Partners write ARI (POST /api/v1/properties/{propertyCode}/ari, ConnectivityService.UpdateAri): batches in the
// provider's codes, applied all or nothing, idempotent, with the same feed entries and hints as staff changes.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let databaseUrl: string;
let property: { id: string; code: string };
let other: { id: string; code: string };
let partner: string;
let grpc: Client<typeof ConnectivityService>;
let connect: Client<typeof ConnectivityService>;

const path = (code = property.code) => `/api/v1/properties/${code}/ari`;

async function post(
  body: unknown,
  opts: { token?: string; key?: string; code?: string } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${app.baseUrl}${path(opts.code)}`, {
    method: "POST",
    headers: {
      ...bearer(opts.token ?? partner),
      "content-type": "application/json",
      ...(opts.key !== undefined ? { "idempotency-key": opts.key } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function ari(from: string, to: string, query = ""): Promise<Json> {
  const res = await fetch(`${app.baseUrl}${path()}?from=${from}&to=${to}${query}`, { headers: bearer(partner) });
  expect(res.status).toBe(200);
  return res.json();
}

/** The days of one room type x rate plan (our codes) from an ARI read. */
function daysOf(read: Json, roomType: string, ratePlan: string): Json[] {
  const rt = read.roomTypes.find((r: Json) => r.code === roomType);
  return rt.ratePlans.find((p: Json) => p.code === ratePlan).days;
}

async function feedHead(): Promise<number> {
  const { rows } = await app.db.pool.query<{ seq: string }>(
    "select coalesce(max(seq), 0)::text as seq from ari_changes where property_id = $1",
    [property.id],
  );
  return Number(rows[0]!.seq);
}

async function hintCount(): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: string }>(
    "select count(*)::text as n from domain_events where property_id = $1 and type = 'availability.changed'",
    [property.id],
  );
  return Number(rows[0]!.n);
}

async function failure(work: Promise<unknown>): Promise<{ code: Code; appCode: string | null }> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError) return { code: err.code, appCode: err.metadata.get("x-error-code") };
    throw err;
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({ databaseUrl });
  property = await createTestProperty(app, { code: "ARW-1", businessDate: "2027-01-01" });
  other = await createTestProperty(app, { code: "ARW-2", businessDate: "2027-01-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const sgl = await inventory.createRoomType(property.id, { code: "SGL", name: "Single", maxOccupancy: 1 });
  for (let i = 0; i < 3; i++) await inventory.createRoom(property.id, { number: `1${i}`, roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "20", roomTypeId: sgl.id });
  await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id, sgl.id],
  });
  await inventory.createRatePlan(property.id, {
    code: "NRF",
    name: "Non refundable",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  const oDbl = await inventory.createRoomType(other.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inventory.createRatePlan(other.id, {
    code: "BAR",
    name: "Bar",
    boardType: "ROOM_ONLY",
    roomTypeIds: [oDbl.id],
  });
  for (const [kind, code, external] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
    ["rate_plan", "NRF", "X-NRF"],
  ] as const)
    await setProviderMapping(app.db.pool, {
      propertyCode: property.code,
      provider: "acme",
      kind,
      code,
      externalCode: external,
    });
  partner = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [property.code, other.code],
      scopes: ["ari.read", "ari.write"],
      approved: true,
    })
  ).accessToken;
  grpc = createClient(ConnectivityService, createGrpcTransport({ baseUrl: app.baseUrl }));
  connect = createClient(ConnectivityService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
});
afterAll(async () => {
  await app?.close();
});

describe("POST /api/v1/properties/{propertyCode}/ari", () => {
  it("writes prices and every restriction in the provider's codes in one call; the ARI read shows them at once", async () => {
    const head = await feedHead();
    const hints = await hintCount();
    const res = await post({
      changes: [
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-03-01", to: "2027-03-11", priceMinor: 123456 },
        {
          roomTypeCode: "X-DBL",
          ratePlanCode: "X-NRF",
          from: "2027-03-01",
          to: "2027-03-04",
          priceMinor: 99900,
          minStay: 2,
        },
        // SGL has no acme code: our code is accepted
        {
          roomTypeCode: "SGL",
          ratePlanCode: "X-BAR",
          from: "2027-03-02",
          to: "2027-03-03",
          stopSell: true,
          maxStay: 7,
        },
        {
          roomTypeCode: "X-DBL",
          ratePlanCode: "X-BAR",
          from: "2027-03-05",
          to: "2027-03-06",
          closedToArrival: true,
          closedToDeparture: true,
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ propertyCode: "ARW-1", changes: 4, cells: 14 });
    const read = await ari("2027-03-01", "2027-03-11");
    const bar = daysOf(read, "DBL", "BAR");
    expect(bar.map((d: Json) => d.priceMinor)).toEqual(Array(10).fill(123456));
    expect(bar[4]).toMatchObject({
      date: "2027-03-05",
      closedToArrival: true,
      closedToDeparture: true,
      stopSell: false,
    });
    expect(bar[3]).toMatchObject({ closedToArrival: false, closedToDeparture: false });
    const nrf = daysOf(read, "DBL", "NRF");
    expect(nrf.slice(0, 4).map((d: Json) => [d.priceMinor, d.minStay])).toEqual([
      [99900, 2],
      [99900, 2],
      [99900, 2],
      [null, null],
    ]);
    const sgl = daysOf(read, "SGL", "BAR");
    expect(sgl[1]).toMatchObject({ date: "2027-03-02", stopSell: true, maxStay: 7, priceMinor: null });
    expect(sgl[0]).toMatchObject({ stopSell: false, maxStay: null });

    // one feed entry and one availability.changed hint per reason, as staff changes record
    const feed = await fetch(
      `${app.baseUrl}${path()}/changes?cursor=${Buffer.from(`v1:${head}`).toString("base64url")}`,
      {
        headers: bearer(partner),
      },
    ).then((r) => r.json() as Promise<Json>);
    expect(
      feed.data.map((c: Json) => [
        c.reason,
        c.from,
        c.to,
        c.roomTypes.map((x: Json) => x.externalCode ?? x.code),
        c.ratePlans.map((x: Json) => x.externalCode),
      ]),
    ).toEqual([
      ["rate", "2027-03-01", "2027-03-11", ["X-DBL"], ["X-BAR", "X-NRF"]],
      ["restriction", "2027-03-01", "2027-03-06", ["X-DBL", "SGL"], ["X-BAR", "X-NRF"]],
    ]);
    expect(await hintCount()).toBe(hints + 2);
    const { rows } = await app.db.pool.query<{ data: Json }>(
      "select data from domain_events where property_id = $1 and type = 'availability.changed' order by occurred_at desc, data ->> 'reason' limit 2",
      [property.id],
    );
    expect(rows.map((r) => r.data)).toEqual([
      { from: "2027-03-01", to: "2027-03-11", toExclusive: true, roomTypes: ["DBL"], reason: "rate" },
      { from: "2027-03-01", to: "2027-03-06", toExclusive: true, roomTypes: ["DBL", "SGL"], reason: "restriction" },
    ]);
    // the hint goes out like every domain event: its webhook fan-out job is queued
    const jobs = await app.db.pool.query(
      "select 1 from pgboss.job j join domain_events e on j.data ->> 'eventId' = e.id::text where e.property_id = $1 and e.type = 'availability.changed'",
      [property.id],
    );
    expect(jobs.rowCount).toBeGreaterThanOrEqual(2);
  });

  it("writes only the weekdays asked for; a later change of a cell wins and a field left out keeps its value", async () => {
    const res = await post({
      changes: [
        {
          roomTypeCode: "X-DBL",
          ratePlanCode: "X-BAR",
          from: "2027-04-01",
          to: "2027-04-15",
          weekdays: [5, 6],
          priceMinor: 200000,
          minStay: 3,
        },
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-04-02", to: "2027-04-03", priceMinor: 210000 },
        {
          roomTypeCode: "X-DBL",
          ratePlanCode: "X-BAR",
          from: "2027-04-01",
          to: "2027-04-15",
          weekdays: [6],
          stopSell: true,
        },
      ],
    });
    expect(res.status).toBe(200);
    const days = daysOf(await ari("2027-04-01", "2027-04-15"), "DBL", "BAR");
    // 2027-04-02 and 04-09 are Fridays, 04-03 and 04-10 Saturdays
    const set = days
      .filter((d: Json) => d.priceMinor !== null)
      .map((d: Json) => [d.date, d.priceMinor, d.minStay, d.stopSell]);
    expect(set).toEqual([
      ["2027-04-02", 210000, 3, false],
      ["2027-04-03", 200000, 3, true],
      ["2027-04-09", 200000, 3, false],
      ["2027-04-10", 200000, 3, true],
    ]);
    // stop sell off again, min stay removed (0): the price and other fields stay
    expect(
      (
        await post({
          changes: [
            {
              roomTypeCode: "X-DBL",
              ratePlanCode: "X-BAR",
              from: "2027-04-03",
              to: "2027-04-04",
              stopSell: false,
              minStay: 0,
            },
          ],
        })
      ).status,
    ).toBe(200);
    const after = daysOf(await ari("2027-04-03", "2027-04-04"), "DBL", "BAR")[0];
    expect(after).toMatchObject({ priceMinor: 200000, minStay: null, stopSell: false });
  });

  it("is all or nothing: 422 names every bad change by index and nothing is written", async () => {
    const head = await feedHead();
    const hints = await hintCount();
    const res = await post({
      changes: [
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-01", to: "2027-05-10", priceMinor: 1 },
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-10", to: "2027-05-01", priceMinor: 1 },
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-01", to: "2027-05-02", minStay: 5, maxStay: 2 },
        {
          roomTypeCode: "X-DBL",
          ratePlanCode: "X-BAR",
          from: "2027-05-01",
          to: "2027-05-02",
          weekdays: [8],
          priceMinor: -5,
        },
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-01", to: "2027-05-02" },
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-01", to: "2029-05-02", stopSell: true },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details.map((d: Json) => d.field)).toEqual([
      "changes[1].to",
      "changes[2].maxStay",
      "changes[3].weekdays",
      "changes[3].priceMinor",
      "changes[4].priceMinor",
      "changes[5].to",
    ]);
    // a rate plan that does not cover the room type: 422 too, found after the codes resolved
    const uncovered = await post({
      changes: [
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-01", to: "2027-05-10", priceMinor: 1 },
        { roomTypeCode: "SGL", ratePlanCode: "X-NRF", from: "2027-05-01", to: "2027-05-10", priceMinor: 1 },
      ],
    });
    expect(uncovered.status).toBe(422);
    expect(uncovered.body.error.details).toEqual([
      { field: "changes[1].ratePlanCode", reason: "rate plan NRF does not cover room type SGL" },
    ]);
    const days = daysOf(await ari("2027-05-01", "2027-05-10"), "DBL", "BAR");
    expect(days.every((d: Json) => d.priceMinor === null && d.minStay === null && !d.stopSell)).toBe(true);
    expect(await feedHead()).toBe(head);
    expect(await hintCount()).toBe(hints);
  });

  it("bounds the request: 1 to 1,000 changes, at most 100,000 cells, 400 for a body that is not the message", async () => {
    const one = { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-06-01", to: "2027-06-02", priceMinor: 1 };
    const empty = await post({ changes: [] });
    expect([empty.status, empty.body.error.details]).toEqual([
      422,
      [{ field: "changes", reason: "1 to 1000 changes" }],
    ]);
    const many = await post({ changes: Array(1001).fill(one) });
    expect(many.status).toBe(422);
    const wide = { ...one, from: "2027-01-01", to: "2028-12-31" }; // 730 days
    const cells = await post({ changes: Array(300).fill(wide) });
    expect(cells.status).toBe(422);
    expect(cells.body.error.details[0].reason).toContain("at most 100000 cells");
    const bad = await post({ changes: [{ ...one, priceMinor: "lots" }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_argument");
  });

  it("refuses codes and properties outside the client's grants (404), a missing scope (403) and an unapproved client (403)", async () => {
    const change = {
      roomTypeCode: "X-DBL",
      ratePlanCode: "X-BAR",
      from: "2027-06-01",
      to: "2027-06-02",
      priceMinor: 1,
    };
    const unknown = await post({
      changes: [change, { ...change, roomTypeCode: "X-SUITE" }, { ...change, ratePlanCode: "NOPE" }],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details.map((d: Json) => d.field)).toEqual([
      "changes[1].roomTypeCode",
      "changes[2].ratePlanCode",
    ]);
    // a mapped entity is addressed by the provider's code only
    expect((await post({ changes: [{ ...change, roomTypeCode: "DBL" }] })).status).toBe(404);
    // granted property, but the codes are this property's mappings only
    expect((await post({ changes: [change] }, { code: other.code })).status).toBe(404);
    // a property not granted to the client looks like one that does not exist
    const stranger = await createTestProperty(app, { code: "ARW-3" });
    expect((await post({ changes: [change] }, { code: stranger.code })).status).toBe(404);
    expect((await post({ changes: [change] }, { code: "NO-SUCH" })).status).toBe(404);
    const readOnly = (
      await createTestClient(app, {
        kind: "partner",
        provider: "acme",
        propertyCodes: [property.code],
        scopes: ["ari.read"],
        approved: true,
      })
    ).accessToken;
    const forbidden = await post({ changes: [change] }, { token: readOnly });
    expect([forbidden.status, forbidden.body.error.code]).toEqual([403, "forbidden"]);
    const unapproved = (
      await createTestClient(app, {
        kind: "partner",
        provider: "acme",
        propertyCodes: [property.code],
        scopes: ["ari.write"],
      })
    ).accessToken;
    const refused = await post({ changes: [change] }, { token: unapproved });
    expect([refused.status, refused.body.error.code]).toEqual([403, "partner_not_approved"]);
    expect(daysOf(await ari("2027-06-01", "2027-06-02"), "DBL", "BAR")[0].priceMinor).toBeNull();
  });

  it("takes an unapproved client's writes on its sandbox property (our codes where it has no mapping)", async () => {
    const sandbox = await createTestProperty(app, { code: "ARW-SBX", sandbox: true });
    const rt = await app.services.inventory.createRoomType(sandbox.id, {
      code: "DBL",
      name: "Double",
      maxOccupancy: 2,
    });
    await app.services.inventory.createRatePlan(sandbox.id, {
      code: "BAR",
      name: "Bar",
      boardType: "ROOM_ONLY",
      roomTypeIds: [rt.id],
    });
    const token = (
      await createTestClient(app, {
        kind: "partner",
        provider: "acme",
        propertyCodes: [sandbox.code],
        scopes: ["ari.write"],
      })
    ).accessToken;
    const change = { roomTypeCode: "DBL", ratePlanCode: "BAR", from: "2027-06-01", to: "2027-06-03", stopSell: true };
    const res = await post({ changes: [change] }, { token, code: sandbox.code });
    expect([res.status, res.body]).toEqual([200, { propertyCode: "ARW-SBX", changes: 1, cells: 2 }]);
  });

  it("replays a repeated Idempotency-Key without writing again and refuses the key with another body (409)", async () => {
    const body = {
      changes: [
        { roomTypeCode: "X-DBL", ratePlanCode: "X-NRF", from: "2027-07-01", to: "2027-07-08", priceMinor: 77700 },
      ],
    };
    const first = await post(body, { key: "ari-rest-1" });
    expect(first.status).toBe(200);
    const head = await feedHead();
    const again = await post(body, { key: "ari-rest-1" });
    expect([again.status, again.headers.get("idempotency-replayed"), again.body]).toEqual([200, "true", first.body]);
    expect(await feedHead()).toBe(head);
    const other = await post({ changes: [{ ...body.changes[0], priceMinor: 1 }] }, { key: "ari-rest-1" });
    expect([other.status, other.body.error.code]).toEqual([409, "idempotency_conflict"]);
    expect(daysOf(await ari("2027-07-01", "2027-07-02"), "DBL", "NRF")[0].priceMinor).toBe(77700);
  });
});

describe("concurrent writers", () => {
  it("a partner batch and staff restriction changes of the same days both keep their fields", async () => {
    const inventory = app.services.inventory;
    const [dbl] = (await inventory.listRoomTypes(property.id)).filter((rt) => rt.code === "DBL");
    const [bar] = (await inventory.listRatePlans(property.id)).filter((rp) => rp.code === "BAR");
    const rounds = Array.from({ length: 6 }, (_, i) => {
      const from = `2027-09-${String(1 + i * 4).padStart(2, "0")}`;
      const to = `2027-09-${String(5 + i * 4).padStart(2, "0")}`;
      return Promise.all([
        post({ changes: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from, to, minStay: 3, priceMinor: 4242 }] }),
        inventory.setRestrictions(property.id, {
          ratePlanIds: [bar!.id],
          roomTypeIds: [dbl!.id],
          from,
          to,
          weekdays: [],
          stopSell: true,
        }),
        inventory.setPrices(property.id, { ratePlanId: bar!.id, roomTypeId: dbl!.id, from, to, amountMinor: 4242n }),
      ]);
    });
    for (const [res] of await Promise.all(rounds)) expect(res.status).toBe(200);
    const days = daysOf(await ari("2027-09-01", "2027-09-25"), "DBL", "BAR");
    expect(days.every((d: Json) => d.minStay === 3 && d.stopSell === true && d.priceMinor === 4242)).toBe(true);
  });
});

describe("ConnectivityService.UpdateAri over Connect and gRPC", () => {
  const request = (priceMinor: bigint, from = "2027-08-01") => ({
    propertyCode: property.code,
    changes: [
      {
        roomTypeCode: "X-DBL",
        ratePlanCode: "X-BAR",
        from,
        to: "2027-08-11",
        weekdays: [1],
        priceMinor,
        closedToArrival: true,
      },
      { roomTypeCode: "SGL", ratePlanCode: "X-BAR", from, to: "2027-08-11", minStay: 2 },
    ],
  });

  for (const [face, key] of [
    ["Connect", "ari-connect-1"],
    ["gRPC", "ari-grpc-1"],
  ] as const) {
    it(`${face}: writes, reads back with GetAri, replays a key, refuses a conflicting reuse, 422, 404 and 403`, async () => {
      const c = face === "Connect" ? connect : grpc;
      const price = face === "Connect" ? 111n : 222n;
      const headers = { ...bearer(partner), "idempotency-key": key };
      const res = await c.updateAri(request(price), { headers });
      expect([res.propertyCode, res.changes, res.cells]).toEqual(["ARW-1", 2, 12]);
      const read = await c.getAri(
        { propertyCode: property.code, from: "2027-08-01", to: "2027-08-11" },
        { headers: bearer(partner) },
      );
      const dbl = read.roomTypes.find((r) => r.code === "DBL")!.ratePlans.find((p) => p.code === "BAR")!.days;
      // Mondays: 2027-08-02 and 08-09
      expect(
        dbl.filter((d) => d.priceMinor !== undefined).map((d) => [d.date, d.priceMinor, d.closedToArrival]),
      ).toEqual([
        ["2027-08-02", price, true],
        ["2027-08-09", price, true],
      ]);
      const sgl = read.roomTypes.find((r) => r.code === "SGL")!.ratePlans[0]!.days;
      expect(sgl.every((d) => d.minStay === 2)).toBe(true);

      const head = await feedHead();
      let replayed: string | null = null;
      const again = await c.updateAri(request(price), {
        headers,
        onHeader: (h) => {
          replayed = h.get("idempotency-replayed");
        },
      });
      expect([again.cells, replayed]).toEqual([12, "true"]);
      expect(await feedHead()).toBe(head);
      expect((await failure(c.updateAri(request(price + 1n), { headers }))).appCode).toBe("idempotency_conflict");

      const invalid = await failure(c.updateAri(request(price, "2027-08-11"), { headers: bearer(partner) }));
      expect([invalid.code, invalid.appCode]).toEqual([Code.InvalidArgument, "validation_failed"]);
      const notFound = await failure(
        c.updateAri({ ...request(price), propertyCode: "NO-SUCH" }, { headers: bearer(partner) }),
      );
      expect(notFound.code).toBe(Code.NotFound);
      const readOnly = (
        await createTestClient(app, {
          kind: "partner",
          provider: "acme",
          propertyCodes: [property.code],
          scopes: ["ari.read"],
          approved: true,
        })
      ).accessToken;
      expect((await failure(c.updateAri(request(price), { headers: bearer(readOnly) }))).code).toBe(
        Code.PermissionDenied,
      );
      expect(await feedHead()).toBe(head);
    });
  }
});

describe("granting ari.write", () => {
  it("npm run ops -- client:create accepts the scope", { timeout: 60_000 }, async () => {
    const run = promisify(execFile);
    const env = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" };
    const { stdout } = await run(
      process.execPath,
      [
        "src/ops/cli.ts",
        "client:create",
        "--provider",
        "acme",
        "--properties",
        property.code,
        "--scopes",
        "ari.read,ari.write",
        "--json",
      ],
      { env, timeout: 50_000 },
    );
    const created = JSON.parse(stdout) as { clientId: string; scopes: string[] };
    expect(created.scopes).toEqual(["ari.read", "ari.write"]);
  });

  it("capabilities list ari-write where the client may write", async () => {
    const res = await fetch(`${app.baseUrl}/api/v1/capabilities`, { headers: bearer(partner) });
    const body = (await res.json()) as Json;
    expect(body.scopes).toEqual(["ari.read", "ari.write"]);
    expect(body.properties[0].capabilities).toEqual(["ari", "ari-write"]);
  });
});

describe("docs/partners/ari-write.md", () => {
  it("its curl example writes to the demo hotel as documented", { timeout: 60_000 }, async () => {
    await seedDemo(app.deps, app.services.admin);
    const doc = readFileSync(new URL("../../docs/partners/ari-write.md", import.meta.url), "utf8");
    for (const [kind, code, external] of [
      ["room_type", "DBL", "ACME-DOUBLE"],
      ["rate_plan", "BB", "ACME-BB"],
    ] as const)
      await setProviderMapping(app.db.pool, {
        propertyCode: "DEMO-IST",
        provider: "acme",
        kind,
        code,
        externalCode: external,
      });
    const token = (
      await createTestClient(app, {
        kind: "partner",
        provider: "acme",
        propertyCodes: ["DEMO-IST"],
        scopes: ["mappings.read", "ari.read", "ari.write"],
        approved: true,
      })
    ).accessToken;
    const body = /-d '(\{"changes":[\s\S]*?\]\})'/.exec(doc)![1]!;
    const expected = /ari\n# (\{"propertyCode".*\})/.exec(doc)![1]!;
    const res = await post(JSON.parse(body), { token, code: "DEMO-IST", key: "acme-batch-0001" });
    expect([res.status, res.body]).toEqual([200, JSON.parse(expected)]);
    const read = await fetch(
      `${app.baseUrl}/api/v1/properties/DEMO-IST/ari?from=2027-03-05&to=2027-03-07&roomTypes=ACME-DOUBLE&ratePlans=ACME-BB`,
      { headers: bearer(token) },
    ).then((r) => r.json() as Promise<Json>);
    expect(read.roomTypes[0].ratePlans[0].days.map((d: Json) => [d.date, d.priceMinor, d.minStay])).toEqual([
      ["2027-03-05", 320000, 2],
      ["2027-03-06", 320000, 2],
    ]);
  });
});
