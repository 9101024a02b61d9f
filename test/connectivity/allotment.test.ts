import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// Availability caps: a partner the hotel lets manage allotment (scope allotment.write) caps the rooms of a type
// shown available per day through the ARI write (`availabilityCap`, -1 removes it), on REST, Connect and gRPC.
// The availability and ARI reads never show more than the cap (every rate plan of the room type), the write leaves
// an ARI feed entry and an availability.changed hint (reason "allotment") and an audit entry; a client without the
// scope is refused (403) and a bad cap is a 422, with nothing written.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let dblId: string;
let allotter: { clientId: string; accessToken: string };
let plain: { clientId: string; accessToken: string };
let manager: { accessToken: string };
let viewer: { accessToken: string };
let grpc: Client<typeof ConnectivityService>;
let connect: Client<typeof ConnectivityService>;

const from = "2027-05-10";
const to = "2027-05-14";

async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: {
      ...bearer(token),
      ...(body !== undefined ? { "content-type": "application/json", "idempotency-key": randomUUID() } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
}

const write = (changes: unknown[], token = allotter.accessToken) =>
  call("POST", `/api/v1/properties/${property.code}/ari`, token, { changes });

async function availability(rt: string, a = from, b = to): Promise<Json[]> {
  const res = await call(
    "GET",
    `/api/v1/properties/${property.code}/availability?from=${a}&to=${b}&roomTypes=${rt}`,
    allotter.accessToken,
  );
  expect(res.status).toBe(200);
  return res.body.roomTypes[0].days;
}

/** `available` of every rate plan of X-DBL from the ARI read, per day. */
async function ariAvailable(a = from, b = to): Promise<Record<string, number[]>> {
  const res = await call(
    "GET",
    `/api/v1/properties/${property.code}/ari?from=${a}&to=${b}&roomTypes=X-DBL`,
    allotter.accessToken,
  );
  expect(res.status).toBe(200);
  return Object.fromEntries(
    res.body.roomTypes[0].ratePlans.map((p: Json) => [p.code, p.days.map((d: Json) => d.available)]),
  );
}

async function failure(work: Promise<unknown>): Promise<{ code: Code; appCode: string | null; message: string }> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError)
      return { code: err.code, appCode: err.metadata.get("x-error-code"), message: err.rawMessage };
    throw err;
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "ALT-1", businessDate: "2027-01-01" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const sgl = await inv.createRoomType(property.id, { code: "SGL", name: "Single", maxOccupancy: 1 });
  dblId = dbl.id;
  for (let i = 0; i < 4; i++) await inv.createRoom(property.id, { number: `1${i}`, roomTypeId: dbl.id });
  await inv.createRoom(property.id, { number: "20", roomTypeId: sgl.id });
  await inv.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id, sgl.id],
  });
  await inv.createRatePlan(property.id, {
    code: "NRF",
    name: "Non refundable",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
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
  allotter = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["ari.read", "ari.write", "availability.read", "allotment.write"],
    approved: true,
  });
  plain = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["ari.read", "ari.write", "availability.read"],
    approved: true,
  });
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  viewer = await createStaffSession(app, { propertyCode: property.code, role: "viewer" });
  grpc = createClient(ConnectivityService, createGrpcTransport({ baseUrl: app.baseUrl }));
  connect = createClient(ConnectivityService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
});
afterAll(async () => {
  await app?.close();
});

describe("availability caps", () => {
  it("REST: a cap limits what the availability and ARI reads show, for every rate plan; fed, hinted and audited", async () => {
    const { rows: before } = await app.db.pool.query<{ seq: string }>(
      "select coalesce(max(seq), 0)::text as seq from ari_changes where property_id = $1",
      [property.id],
    );
    const res = await write([
      { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-11", to: "2027-05-13", availabilityCap: 2 },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ propertyCode: property.code, changes: 1 });
    const days = await availability("X-DBL");
    expect(days.map((d) => d.available)).toEqual([4, 2, 2, 4]);
    expect(days.map((d) => d.availabilityCap)).toEqual([null, 2, 2, null]);
    // the total and the counters are the rooms' own: the cap only limits what is offered
    expect(days[1]).toMatchObject({ total: 4, sold: 0, blocked: 0, outOfOrder: 0 });
    expect(await ariAvailable()).toEqual({ BAR: [4, 2, 2, 4], NRF: [4, 2, 2, 4] });
    // another room type is untouched
    expect((await availability("SGL")).map((d) => d.available)).toEqual([1, 1, 1, 1]);

    const feed = await app.db.pool.query<{ reason: string; from: string; to: string; rt: string[]; rp: string[] }>(
      `select reason, to_char(from_date, 'YYYY-MM-DD') as from, to_char(to_date, 'YYYY-MM-DD') as to,
              room_types as rt, rate_plans as rp
         from ari_changes where property_id = $1 and seq > $2 order by seq`,
      [property.id, before[0]!.seq],
    );
    expect(feed.rows).toEqual([{ reason: "allotment", from: "2027-05-11", to: "2027-05-13", rt: ["DBL"], rp: [] }]);
    const items = await call("GET", `/api/v1/properties/${property.code}/ari/changes?limit=500`, allotter.accessToken);
    expect(items.body.data.at(-1)).toMatchObject({ reason: "allotment", from: "2027-05-11", to: "2027-05-13" });
    const hints = await app.db.pool.query<{ data: Json }>(
      "select data from domain_events where property_id = $1 and type = 'availability.changed' order by created_at desc limit 1",
      [property.id],
    );
    expect(hints.rows[0]!.data).toMatchObject({ reason: "allotment", roomTypes: ["DBL"], from: "2027-05-11" });
    const audit = await call(
      "GET",
      `/api/mobile/v1/audit?entityType=restriction&actorId=${allotter.clientId}`,
      manager.accessToken,
    );
    expect(audit.status).toBe(200);
    expect(audit.body.changes).toHaveLength(1);
    expect(audit.body.changes[0]).toMatchObject({ action: "set", actor: { kind: "partner", id: allotter.clientId } });
    expect((audit.body.changes[0].changes as Json[]).find((f) => f.field === "availabilityCap")?.after).toBe(2);
  });

  it("the rooms' own availability wins when it is below the cap; a cap above the rooms changes nothing; 0 closes; -1 removes", async () => {
    // three of the four doubles blocked on the 12th: one left, below the cap of 2
    await app.services.inventory.createRoomBlock(property.id, {
      roomTypeId: dblId,
      from: "2027-05-12",
      to: "2027-05-13",
      count: 3,
    });
    expect((await availability("X-DBL")).map((d) => d.available)).toEqual([4, 2, 1, 4]);
    expect(
      (await write([{ roomTypeCode: "X-DBL", ratePlanCode: "X-NRF", from, to: "2027-05-11", availabilityCap: 9 }]))
        .status,
    ).toBe(200);
    expect((await availability("X-DBL")).map((d) => [d.available, d.availabilityCap])).toEqual([
      [4, 9],
      [2, 2],
      [1, 2],
      [4, null],
    ]);
    // the hotel's staff see the partner's caps beside their own counters (InventoryService over Connect)
    const staff = await createClient(
      InventoryService,
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    ).getAvailability(
      { propertyCode: property.code, from, to, roomTypeCodes: ["DBL"] },
      { headers: bearer(manager.accessToken) },
    );
    expect(staff.roomTypes[0]!.days.map((d) => [d.available, d.blocked, d.availabilityCap])).toEqual([
      [4, 0, 9],
      [2, 0, 2],
      [1, 3, 2],
      [4, 0, undefined],
    ]);
    // several changes of one room type in one call: the later one wins for a day
    const closed = await write([
      { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-05-13", to: "2027-05-14", availabilityCap: 3 },
      { roomTypeCode: "X-DBL", ratePlanCode: "X-NRF", from: "2027-05-13", to: "2027-05-14", availabilityCap: 0 },
    ]);
    expect(closed.status).toBe(200);
    expect(await ariAvailable()).toEqual({ BAR: [4, 2, 1, 0], NRF: [4, 2, 1, 0] });
    const removed = await write([{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from, to, availabilityCap: -1 }]);
    expect(removed.status).toBe(200);
    const days = await availability("X-DBL");
    expect(days.map((d) => d.available)).toEqual([4, 4, 1, 4]);
    expect(days.every((d) => d.availabilityCap === null)).toBe(true);
  });

  it("gRPC and Connect: UpdateAri sets a cap beside a price; GetAvailability shows it", async () => {
    const res = await grpc.updateAri(
      {
        propertyCode: property.code,
        changes: [
          {
            roomTypeCode: "X-DBL",
            ratePlanCode: "X-BAR",
            from: "2027-06-01",
            to: "2027-06-03",
            priceMinor: 33_000n,
            availabilityCap: 1,
          },
        ],
      },
      { headers: { ...bearer(allotter.accessToken), "idempotency-key": randomUUID() } },
    );
    expect(res.changes).toBe(1);
    const read = await connect.getAvailability(
      { propertyCode: property.code, from: "2027-06-01", to: "2027-06-04", roomTypes: ["X-DBL"] },
      { headers: bearer(allotter.accessToken) },
    );
    expect(read.roomTypes[0]!.days.map((d) => [d.available, d.availabilityCap])).toEqual([
      [1, 1],
      [1, 1],
      [4, undefined],
    ]);
    const ari = await grpc.getAri(
      { propertyCode: property.code, from: "2027-06-01", to: "2027-06-02", roomTypes: ["X-DBL"], ratePlans: ["X-BAR"] },
      { headers: bearer(allotter.accessToken) },
    );
    expect(ari.roomTypes[0]!.ratePlans[0]!.days[0]).toMatchObject({ available: 1, priceMinor: 33_000n });
    const lifted = await connect.updateAri(
      {
        propertyCode: property.code,
        changes: [
          { roomTypeCode: "X-DBL", ratePlanCode: "X-NRF", from: "2027-06-01", to: "2027-06-02", availabilityCap: -1 },
        ],
      },
      { headers: { ...bearer(allotter.accessToken), "idempotency-key": randomUUID() } },
    );
    expect(lifted.cells).toBe(1);
    expect((await availability("X-DBL", "2027-06-01", "2027-06-03")).map((d) => d.available)).toEqual([4, 1]);
  });

  it("without allotment.write a cap is refused on every face (403 naming the change), nothing written; with ari.write alone prices still go", async () => {
    const changes = [
      { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-07-01", to: "2027-07-02", priceMinor: 40_000 },
      { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-07-01", to: "2027-07-02", availabilityCap: 1 },
    ];
    const rest = await write(changes, plain.accessToken);
    expect(rest.status).toBe(403);
    expect(rest.body.error).toMatchObject({
      code: "forbidden",
      details: [{ field: "changes[1].availabilityCap", reason: "needs the scope allotment.write" }],
    });
    const proto = [{ ...changes[1]!, priceMinor: undefined }];
    for (const client of [grpc, connect]) {
      const err = await failure(
        client.updateAri(
          { propertyCode: property.code, changes: proto },
          { headers: { ...bearer(plain.accessToken), "idempotency-key": randomUUID() } },
        ),
      );
      expect(err).toMatchObject({ code: Code.PermissionDenied, appCode: "forbidden" });
    }
    expect((await availability("X-DBL", "2027-07-01", "2027-07-02"))[0].availabilityCap).toBeNull();
    const ari = await call(
      "GET",
      `/api/v1/properties/${property.code}/ari?from=2027-07-01&to=2027-07-02&roomTypes=X-DBL&ratePlans=X-BAR`,
      plain.accessToken,
    );
    expect(ari.body.roomTypes[0].ratePlans[0].days[0].priceMinor).toBeNull();
    const priced = await write([changes[0]], plain.accessToken);
    expect(priced.status).toBe(200);
    // the capability list says who may cap
    const caps = await call("GET", "/api/v1/capabilities", allotter.accessToken);
    expect(caps.body.properties[0].capabilities).toContain("allotment");
    const none = await call("GET", "/api/v1/capabilities", plain.accessToken);
    expect(none.body.properties[0].capabilities).not.toContain("allotment");
  });

  it("a bad cap is a 422 naming it on REST and InvalidArgument on Connect and gRPC; the whole call is refused", async () => {
    for (const bad of [-2, 10_000, 1.5]) {
      const res = await write([
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-08-01", to: "2027-08-02", priceMinor: 50_000 },
        { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-08-01", to: "2027-08-02", availabilityCap: bad },
      ]);
      // 1.5 is not an int32: the REST decoder refuses it (400) before the rule (422)
      expect(res.status).toBe(bad === 1.5 ? 400 : 422);
      if (bad !== 1.5)
        expect(res.body.error.details).toEqual([
          { field: "changes[1].availabilityCap", reason: "0 to 9999 rooms, or -1 to remove the cap" },
        ]);
    }
    for (const client of [grpc, connect]) {
      const err = await failure(
        client.updateAri(
          {
            propertyCode: property.code,
            changes: [
              {
                roomTypeCode: "X-DBL",
                ratePlanCode: "X-BAR",
                from: "2027-08-01",
                to: "2027-08-02",
                availabilityCap: -5,
              },
            ],
          },
          { headers: { ...bearer(allotter.accessToken), "idempotency-key": randomUUID() } },
        ),
      );
      expect(err).toMatchObject({ code: Code.InvalidArgument, appCode: "validation_failed" });
    }
    const ari = await call(
      "GET",
      `/api/v1/properties/${property.code}/ari?from=2027-08-01&to=2027-08-02&roomTypes=X-DBL&ratePlans=X-BAR`,
      allotter.accessToken,
    );
    expect(ari.body.roomTypes[0].ratePlans[0].days[0]).toMatchObject({ available: 4 });
    expect(ari.body.roomTypes[0].ratePlans[0].days[0].priceMinor).toBeNull();
  });

  it("the hotel sets and lifts caps itself (InventoryService.SetAvailabilityCaps, gRPC and Connect, rates.manage); bad input 4xx", async () => {
    const inventory = (transport: "grpc" | "connect") =>
      createClient(
        InventoryService,
        transport === "grpc"
          ? createGrpcTransport({ baseUrl: app.baseUrl })
          : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      );
    const head = async () =>
      (
        await app.db.pool.query<{ seq: string }>(
          "select coalesce(max(seq), 0)::text as seq from ari_changes where property_id = $1",
          [property.id],
        )
      ).rows[0]!.seq;
    const before = await head();
    const set = await inventory("grpc").setAvailabilityCaps(
      {
        propertyCode: property.code,
        roomTypeIds: [dblId],
        from: "2027-09-01",
        to: "2027-09-08",
        weekdays: [5, 6],
        availabilityCap: 1,
      },
      { headers: { ...bearer(manager.accessToken), "idempotency-key": randomUUID() } },
    );
    // 2027-09-03 is a Friday, 09-04 a Saturday
    expect(set.days).toBe(2);
    expect((await availability("X-DBL", "2027-09-02", "2027-09-06")).map((d) => d.available)).toEqual([4, 1, 1, 4]);
    const feed = await app.db.pool.query<{ reason: string; rp: string[] }>(
      "select reason, rate_plans as rp from ari_changes where property_id = $1 and seq > $2",
      [property.id, before],
    );
    expect(feed.rows).toEqual([{ reason: "allotment", rp: [] }]);
    const audit = await call(
      "GET",
      `/api/mobile/v1/audit?entityType=restriction&entityId=${dblId}`,
      manager.accessToken,
    );
    expect(audit.body.changes[0]).toMatchObject({ action: "set", actor: { kind: "user" } });

    // a viewer may not; bad values are refused; another property's room type is not found
    expect(
      await failure(
        inventory("connect").setAvailabilityCaps(
          {
            propertyCode: property.code,
            roomTypeIds: [dblId],
            from: "2027-09-01",
            to: "2027-09-02",
            availabilityCap: 0,
          },
          { headers: { ...bearer(viewer.accessToken), "idempotency-key": randomUUID() } },
        ),
      ),
    ).toMatchObject({ code: Code.PermissionDenied, appCode: "forbidden" });
    type Bad = Partial<{ availabilityCap: number; roomTypeIds: string[]; to: string; weekdays: number[] }>;
    const cases: [Bad, Code, string][] = [
      [{ availabilityCap: -2 }, Code.InvalidArgument, "validation_failed"],
      [{ roomTypeIds: [] }, Code.InvalidArgument, "invalid_argument"],
      [{ to: "2027-08-01" }, Code.InvalidArgument, "invalid_argument"],
      [{ weekdays: [8] }, Code.InvalidArgument, "invalid_argument"],
      [{ roomTypeIds: [randomUUID()] }, Code.NotFound, "not_found"],
    ];
    for (const [bad, code, appCode] of cases)
      for (const transport of ["grpc", "connect"] as const)
        expect(
          await failure(
            inventory(transport).setAvailabilityCaps(
              {
                propertyCode: property.code,
                roomTypeIds: [dblId],
                from: "2027-09-01",
                to: "2027-09-08",
                availabilityCap: 0,
                ...bad,
              },
              { headers: { ...bearer(manager.accessToken), "idempotency-key": randomUUID() } },
            ),
          ),
        ).toMatchObject({ code, appCode });
    expect((await availability("X-DBL", "2027-09-01", "2027-09-02"))[0].available).toBe(4);

    const lifted = await inventory("connect").setAvailabilityCaps(
      { propertyCode: property.code, roomTypeIds: [dblId], from: "2027-09-01", to: "2027-09-08", availabilityCap: -1 },
      { headers: { ...bearer(manager.accessToken), "idempotency-key": randomUUID() } },
    );
    expect(lifted.days).toBe(7);
    expect((await availability("X-DBL", "2027-09-02", "2027-09-06")).every((d) => d.availabilityCap === null)).toBe(
      true,
    );
  });
});
