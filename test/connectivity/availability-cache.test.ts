import { afterAll, beforeAll, describe, expect, it } from "vitest";
import zlib from "node:zlib";
import { request } from "undici";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { connectCompressions } from "../../src/server/compression.ts";
import { createAnswerCache, memoOf } from "../../src/lib/answer-cache.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient } from "../helpers/auth.ts";
import { smallHotel } from "../helpers/small-hotel.ts";
import { killAllServices, startService, type ServiceProcess } from "../helpers/service-process.ts";

// Availability answers are cached per process (lib/answer-cache.ts). Every write that changes the answer must be
// seen by the next read on every face, of this process and of another service process on the same database.

let app: TestApp;
let other: ServiceProcess;
let hotel: Awaited<ReturnType<typeof smallHotel>>;
let token: string;
const range = { from: "2027-03-01", to: "2027-03-31" };

/** One day as every face gives it: [date, total, sold, blocked, outOfOrder, available]. */
type Day = [string, number, number, number, number, number];
interface Shape {
  code: string;
  externalCode: string | null;
  days: Day[];
}
const shape = (a: {
  roomTypes: {
    code: string;
    externalCode?: string | undefined;
    days: { date: string; total: number; sold: number; blocked: number; outOfOrder: number; available: number }[];
  }[];
}): Shape[] =>
  a.roomTypes.map((rt) => ({
    code: rt.code,
    externalCode: rt.externalCode ?? null,
    days: rt.days.map((d) => [d.date, d.total, d.sold, d.blocked, d.outOfOrder, d.available]),
  }));

const decoders: Record<string, (b: Buffer) => Buffer> = {
  identity: (b) => b,
  gzip: (b) => zlib.gunzipSync(b),
  br: (b) => zlib.brotliDecompressSync(b),
  zstd: (b) => zlib.zstdDecompressSync(b),
};

/** REST in every coding: each must decode to the identity answer's exact bytes. */
async function rest(base: string): Promise<Shape[]> {
  const url = `${base}/api/v1/properties/${hotel.property.code}/availability?from=${range.from}&to=${range.to}`;
  let identity: string | undefined;
  for (const coding of ["identity", "zstd", "br", "gzip"]) {
    const res = await request(url, { headers: { authorization: `Bearer ${token}`, "accept-encoding": coding } });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-encoding"] ?? "identity").toBe(coding);
    // a cached answer goes out as stored bytes with their length (a rendered one would be streamed)
    expect(res.headers["content-length"]).toBe(String(bytes.length));
    const text = decoders[coding]!(bytes).toString("utf8");
    if (identity === undefined) identity = text;
    else expect(text, `${coding} decodes to the identity answer`).toBe(identity);
  }
  return shape(JSON.parse(identity!));
}

async function rpc(base: string, transport: "connect" | "grpc"): Promise<Shape[]> {
  const options = { baseUrl: base, acceptCompression: connectCompressions };
  const client = createClient(
    ConnectivityService,
    transport === "connect" ? createConnectTransport({ ...options, httpVersion: "1.1" }) : createGrpcTransport(options),
  );
  const res = await client.getAvailability(
    { propertyCode: hotel.property.code, ...range },
    { headers: { authorization: `Bearer ${token}` } },
  );
  return shape(res);
}

/** The answer of every face of both processes, which must all agree. */
async function everywhere(): Promise<Shape[]> {
  const answers = {
    rest: await rest(app.baseUrl),
    connect: await rpc(app.baseUrl, "connect"),
    grpc: await rpc(app.baseUrl, "grpc"),
    "other process rest": await rest(other.base),
    "other process connect": await rpc(other.base, "connect"),
    "other process grpc": await rpc(other.base, "grpc"),
  };
  for (const [face, answer] of Object.entries(answers)) expect(answer, face).toEqual(answers.rest);
  return answers.rest;
}

const day = (answer: Shape[], code: string, date: string): Day =>
  answer.find((rt) => rt.code === code)!.days.find((d) => d[0] === date)!;

beforeAll(async () => {
  app = await startTestApp();
  hotel = await smallHotel(app, app.baseUrl);
  token = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [hotel.property.code],
      scopes: ["availability.read", "reservations.write"],
    })
  ).accessToken;
  other = await startService({ DATABASE_URL: app.config.databaseUrl!, ROLE: "api" });
}, 90_000);
afterAll(async () => {
  other?.child.kill("SIGTERM");
  await other?.exited;
  killAllServices();
  await app?.close();
});

describe("a cached availability answer is never stale", () => {
  it("repeated reads agree on every face and coding, and come from the cache", async () => {
    const first = await everywhere();
    expect(day(first, "DBL", "2027-03-10")).toEqual(["2027-03-10", 4, 0, 0, 0, 4]);
    expect(await everywhere()).toEqual(first);
  });

  it("a reservation, its change and its cancellation are seen by the next read", async () => {
    await everywhere();
    const res = await hotel.createReservation(hotel.stay());
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    let a = await everywhere();
    expect(day(a, "DBL", "2027-03-10")).toEqual(["2027-03-10", 4, 1, 0, 0, 3]);
    expect(day(a, "DBL", "2027-03-12")).toEqual(["2027-03-12", 4, 0, 0, 0, 4]);

    const actor = { propertyId: hotel.property.id, canOverridePrice: true };
    await app.services.reservations.update(actor, id, { arrivalDate: "2027-03-11", departureDate: "2027-03-13" });
    a = await everywhere();
    expect(day(a, "DBL", "2027-03-10")[2]).toBe(0);
    expect(day(a, "DBL", "2027-03-12")[2]).toBe(1);

    await app.services.reservations.cancel(actor, id);
    a = await everywhere();
    expect(day(a, "DBL", "2027-03-11")).toEqual(["2027-03-11", 4, 0, 0, 0, 4]);
    expect(day(a, "DBL", "2027-03-12")).toEqual(["2027-03-12", 4, 0, 0, 0, 4]);
  });

  it("a room block, a room out of order and back, a new room and a new room type are seen by the next read", async () => {
    const inventory = app.services.inventory;
    const pid = hotel.property.id;
    await everywhere();
    await inventory.createRoomBlock(pid, {
      roomTypeId: hotel.roomTypeId,
      from: "2027-03-20",
      to: "2027-03-22",
      count: 2,
    });
    expect(day(await everywhere(), "DBL", "2027-03-21")).toEqual(["2027-03-21", 4, 0, 2, 0, 2]);

    const room = (await inventory.listRooms(pid)).find((r) => r.number === "101")!;
    await inventory.setRoomStatus(pid, {
      roomId: room.id,
      status: "OUT_OF_ORDER",
      outOfOrderFrom: "2027-03-05",
      outOfOrderTo: "2027-03-07",
    });
    expect(day(await everywhere(), "DBL", "2027-03-06")).toEqual(["2027-03-06", 4, 0, 0, 1, 3]);
    // a period planned for later stays when the room's status changes today: it is removed as a period
    const [period] = await inventory.listOutOfOrderPeriods(pid, { roomId: room.id });
    await inventory.deleteOutOfOrderPeriod(pid, period!.id);
    expect(day(await everywhere(), "DBL", "2027-03-06")).toEqual(["2027-03-06", 4, 0, 0, 0, 4]);

    await inventory.createRoom(pid, { number: "105", roomTypeId: hotel.roomTypeId });
    const a = await everywhere();
    expect(day(a, "DBL", "2027-03-21")).toEqual(["2027-03-21", 5, 0, 2, 0, 3]);
    expect(day(a, "DBL", "2027-03-02")).toEqual(["2027-03-02", 5, 0, 0, 0, 5]);

    await inventory.createRoomType(pid, { code: "STE", name: "Suite", maxOccupancy: 4 });
    expect((await everywhere()).map((rt) => rt.code)).toEqual(["DBL", "STE"]);
  });

  it("a new provider mapping is seen by the next read", async () => {
    expect((await everywhere())[0]!.externalCode).toBe(null);
    await setProviderMapping(app.db.pool, {
      propertyCode: hotel.property.code,
      provider: "acme",
      kind: "room_type",
      code: "DBL",
      externalCode: "ACME-DBL",
    });
    expect((await everywhere())[0]!.externalCode).toBe("ACME-DBL");
  });
});

describe("the answer cache", () => {
  const answer = (n: number) => async () => ({ n });
  it("holds at most its bytes, least recently used out first, and keeps renderings with their answer", async () => {
    const cache = createAnswerCache(1000);
    const a = await cache.get("a", answer(1), () => 400);
    expect(await cache.get("a", answer(2), () => 400)).toBe(a);
    await cache.get("b", answer(3), () => 400);
    // a was used last: b goes first when c needs room
    await cache.get("a", answer(4), () => 400);
    await cache.get("c", answer(5), () => 400);
    expect(cache.bytes).toBe(800);
    expect((await cache.get("b", answer(6), () => 400)).n).toBe(6);
    expect((await cache.get("c", answer(7), () => 400)).n).toBe(5);
    // a rendering is charged to its answer's entry and computed once
    let renders = 0;
    const memo = memoOf(await cache.get("c", answer(8), () => 400))!;
    const render = async () => (renders++, Buffer.alloc(100));
    expect(await memo.get("zstd", render)).toBe(await memo.get("zstd", render));
    expect(renders).toBe(1);
    expect(cache.bytes).toBe(900);
    // larger than the whole cache: answered, not kept
    const big = await cache.get("d", answer(9), () => 2000);
    expect(big.n).toBe(9);
    expect((await cache.get("d", answer(10), () => 2000)).n).toBe(10);
    expect(memoOf({ n: 1 })).toBeUndefined();
  });

  it("ANSWER_CACHE_BYTES=0 computes every time", async () => {
    const cache = createAnswerCache(0);
    expect((await cache.get("a", answer(1), () => 1)).n).toBe(1);
    expect((await cache.get("a", answer(2), () => 1)).n).toBe(2);
    expect(cache.bytes).toBe(0);
  });
});
