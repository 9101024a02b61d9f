import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import net from "node:net";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { createHotel, services, type Hotel } from "../reservations/fixtures.ts";
import { startArguments } from "../../scripts/start-command.ts";

/**
 * kill -9 of the API and of the worker under a bounded load of reservation creates, payments and partner
 * reservation events, each with an Idempotency-Key, with the bookkeeping window widened on purpose
 * (TEST_COMMIT_DELAY_MS holds every keyed write's transaction open after its outcome is recorded). After the
 * restarts every unacknowledged request is retried with its key until answered. Then: every acknowledged write
 * exists exactly once, every retry replays the committed outcome, the room counters equal what reservations hold,
 * every accepted event is processed. CRASH_ROUNDS sets how many API kills (default 2).
 */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 2);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let databaseUrl: string;
let port: number;
let hotel: Hotel;
let staffToken: string;
let partnerToken: string;
let folioId: string;
let db: pg.Pool;
let api: ChildProcess | undefined;
let worker: ChildProcess | undefined;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

function start(role: "api" | "worker"): ChildProcess {
  const child = spawn(process.execPath, startArguments(), {
    cwd: ROOT,
    env: {
      ...process.env,
      ROLE: role,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      TEST_COMMIT_DELAY_MS: "150",
      RATE_LIMIT_ANON_PER_MINUTE: "1000000",
      RATE_LIMIT_STAFF_PER_MINUTE: "1000000",
      RATE_LIMIT_AUTH_PER_MINUTE: "1000000",
      NODE_ENV: "test",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr?.on("data", () => undefined);
  return child;
}

async function waitReady(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("API did not become ready");
}

function kill9(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

interface Write {
  kind: "create" | "payment" | "event";
  /** Its place in the load: the body of every retry is the same (a different body would be idempotency_conflict). */
  index: number;
  key: string;
  /** The committed outcome's id, once acknowledged. */
  id?: string;
  replays: string[];
  lastError?: string;
}

/**
 * The write's text in names and references: its place in the load, never its key (a random UUID can hold 13-19
 * digits between its dashes that pass the Luhn check, and text holding a card number is refused with 422).
 */
const label = (w: Write) => `write ${w.index}`;

const transport = () => createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1" });

async function send(w: Write): Promise<string | undefined> {
  const n = w.index;
  const headers = { authorization: `Bearer ${staffToken}`, "idempotency-key": w.key };
  const opts = { headers, timeoutMs: 10_000 };
  if (w.kind === "create") {
    const r = await createClient(ReservationService, transport()).createReservation(
      {
        propertyCode: hotel.code,
        holderName: `Crash ${label(w)}`,
        arrivalDate: "2027-01-10",
        departureDate: "2027-01-12",
        rooms: [{ roomTypeId: hotel.roomTypeId, ratePlanId: hotel.ratePlanId, adults: 2 }],
      },
      opts,
    );
    return r.reservation?.id;
  }
  if (w.kind === "payment") {
    const r = await createClient(FolioService, transport()).postPayment(
      { propertyCode: hotel.code, folioId, amountMinor: 100n, methodCode: "CASH", reference: label(w) },
      opts,
    );
    return r.payment?.id;
  }
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/properties/${hotel.code}/reservation-events`, {
    method: "POST",
    headers: { authorization: `Bearer ${partnerToken}`, "idempotency-key": w.key, "content-type": "application/json" },
    body: JSON.stringify({
      eventType: "NEW",
      externalReference: `CR-${label(w)}`,
      arrivalDate: "2027-02-10",
      departureDate: "2027-02-11",
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-RO", adults: 1, amountMinor: 100000 + n }],
      totalMinor: 100000 + n,
      currency: "TRY",
      holder: { name: `Event ${label(w)}` },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 202) throw new Error(`event answered ${res.status}`);
  return ((await res.json()) as { eventId: string }).eventId;
}

/** Sends each write until it is acknowledged (connection failures while the API is down are retried). */
async function load(writes: Write[], stopAt: () => boolean): Promise<void> {
  let i = 0;
  const lanes = Array.from({ length: 8 }, async () => {
    while (!stopAt()) {
      const n = i++;
      const w = writes[n % writes.length]!;
      if (w.id !== undefined) {
        if (w.replays.length < 2) {
          const again = await send(w).catch(() => undefined);
          if (again !== undefined) w.replays.push(again);
        } else {
          await new Promise((r) => setTimeout(r, 5)); // nothing left for this write: never spin the event loop
        }
        continue;
      }
      const id = await send(w).catch((e: unknown) => void (w.lastError = String(e)));
      if (id !== undefined) w.id = id;
      else await new Promise((r) => setTimeout(r, 20));
    }
  });
  await Promise.all(lanes);
}

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  port = await freePort();
  const setup = await startTestApp({ databaseUrl, env: { ROLE: "api" } });
  hotel = await createHotel(setup, services(setup).inventory, { rooms: 400 });
  staffToken = (await createStaffSession(setup, { propertyCode: hotel.code, role: "manager" })).accessToken;
  const partner = await createTestClient(setup, {
    provider: "crashprov",
    propertyCodes: [hotel.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
  partnerToken = partner.accessToken;
  await setup.db.pool.query("update api_clients set rate_limit_per_minute = 1000000 where id = $1", [partner.clientId]);
  await setProviderMapping(setup.db.pool, {
    propertyCode: hotel.code,
    provider: "crashprov",
    kind: "room_type",
    code: "DBL",
    externalCode: "X-DBL",
  });
  await setProviderMapping(setup.db.pool, {
    propertyCode: hotel.code,
    provider: "crashprov",
    kind: "rate_plan",
    code: "RO",
    externalCode: "X-RO",
  });
  const r = await services(setup).reservations.create(hotel.actor, {
    source: "DIRECT",
    channel: null,
    externalReference: null,
    holderName: "Folio Guest",
    arrivalDate: "2026-11-22",
    departureDate: "2026-11-23",
    rooms: [{ roomTypeId: hotel.roomTypeId, ratePlanId: hotel.ratePlanId, adults: 1 }],
  });
  await setup.close();
  db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  api = start("api");
  worker = start("worker");
  await waitReady();
  const { folio } = await createClient(FolioService, transport()).getFolio(
    { propertyCode: hotel.code, reservationId: r.reservation.id },
    { headers: { authorization: `Bearer ${staffToken}` } },
  );
  folioId = folio!.id;
}, 120_000);

afterAll(async () => {
  await kill9(api);
  await kill9(worker);
  await db?.end();
});

describe("crash suite: kill -9 of API and worker with the commit window widened", () => {
  it(
    "every acknowledged write exists once, retries replay it, counters match, every accepted event is processed",
    { timeout: 420_000 },
    async () => {
      const writes: Write[] = [];
      for (let i = 0; i < 150; i++)
        writes.push({
          kind: (["create", "payment", "event"] as const)[i % 3]!,
          index: i,
          key: randomUUID(),
          replays: [],
        });
      let done = false;
      const running = load(writes, () => done);
      for (let round = 0; round < ROUNDS; round++) {
        await new Promise((r) => setTimeout(r, 700));
        await kill9(api);
        if (round === 0) await kill9(worker);
        await new Promise((r) => setTimeout(r, 200));
        api = start("api");
        if (round === 0) worker = start("worker");
        await waitReady();
      }
      const deadline = Date.now() + 120_000;
      while (writes.some((w) => w.id === undefined || w.replays.length < 2) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      done = true;
      await running;

      expect(writes.filter((w) => w.id === undefined).map((w) => `${w.kind} ${w.key}: ${w.lastError ?? ""}`)).toEqual(
        [],
      );
      // Every retry with the same key got the committed outcome.
      for (const w of writes) for (const again of w.replays) expect(again).toBe(w.id);

      const creates = writes.filter((w) => w.kind === "create");
      const { rows: perHolder } = await db.query<{ holder_name: string; n: string }>(
        "select holder_name, count(*) as n from reservations where holder_name like 'Crash %' group by holder_name",
      );
      expect(perHolder.length).toBe(creates.length);
      expect(perHolder.filter((r) => r.n !== "1")).toEqual([]);
      const { rows: ids } = await db.query<{ id: string }>(
        "select id from reservations where holder_name like 'Crash %'",
      );
      expect(new Set(ids.map((r) => r.id))).toEqual(new Set(creates.map((w) => w.id)));

      const payments = writes.filter((w) => w.kind === "payment");
      const { rows: paid } = await db.query<{ reference: string; n: string }>(
        "select reference, count(*) as n from folio_payments where folio_id = $1 group by reference",
        [folioId],
      );
      expect(paid.length).toBe(payments.length);
      expect(paid.filter((r) => r.n !== "1")).toEqual([]);

      // Counters equal what the live reservations hold, night by night.
      const { rows: drift } = await db.query(
        `select d.date, d.sold, (select count(*) from reservation_rooms rr join reservations r on r.id = rr.reservation_id
          where rr.room_type_id = d.room_type_id and r.status in ('TENTATIVE','GUARANTEED','IN_HOUSE') and d.date >= r.arrival_date and d.date < r.departure_date)::int as held
       from room_type_days d where d.property_id = $1`,
        [hotel.propertyId],
      );
      expect(drift.filter((r: { sold: number; held: number }) => r.sold !== r.held)).toEqual([]);

      // Every accepted event is processed (a job lost with the killed worker runs again once its heartbeat is missed).
      const events = writes.filter((w) => w.kind === "event");
      const until = Date.now() + 90_000;
      let queued = events.length;
      while (Date.now() < until) {
        const { rows } = await db.query<{ n: string }>(
          "select count(*) as n from partner_messages where id = any($1::uuid[]) and status = 'QUEUED'",
          [events.map((e) => e.id)],
        );
        queued = Number(rows[0]!.n);
        if (queued === 0) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(queued).toBe(0);
      const { rows: accepted } = await db.query<{ n: string }>(
        "select count(*) as n from partner_messages where id = any($1::uuid[])",
        [events.map((e) => e.id)],
      );
      expect(Number(accepted[0]!.n)).toBe(events.length);
      const { rows: booked } = await db.query<{ n: string }>(
        "select count(*) as n from reservations where holder_name like 'Event %'",
      );
      expect(Number(booked[0]!.n)).toBe(events.length);
      console.log(
        `crash: ${ROUNDS} API kills, 1 worker kill, ${creates.length} creates, ${payments.length} payments, ${events.length} events, all exactly once`,
      );
    },
  );
});
