import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { startPgCluster, startReplica, type PgCluster } from "../../scripts/pg-cluster.ts";
import { createTestClient } from "../helpers/auth.ts";
import { killAllServices, startService, until, type ServiceProcess } from "../helpers/service-process.ts";
import { smallHotel } from "../helpers/small-hotel.ts";

// DATABASE_REPLICA_URL with a real streaming replica (pg_basebackup of a running primary, a hot standby): partner
// availability is read from the replica while it is within REPLICA_MAX_LAG_MS, from the primary once it lags more
// (replay paused), and the reservations feed always from the primary, so a cursor never skips a change.
let primary: PgCluster;
let replica: PgCluster;
let admin: App;
let hotel: Awaited<ReturnType<typeof smallHotel>>;
let partner: { accessToken: string };
let api: ServiceProcess;
let dataDir: string;
let env: Record<string, string>;
const MAX_LAG_MS = 1_500;

const onReplica = async <R>(text: string): Promise<R[]> => {
  const c = new pg.Client({ connectionString: replica.url("hotelops") });
  await c.connect();
  try {
    return (await c.query(text)).rows as R[];
  } finally {
    await c.end();
  }
};

beforeAll(async () => {
  primary = await startPgCluster({ settings: { wal_level: "replica", max_wal_senders: "4" } });
  const boot = new pg.Client({ connectionString: primary.url() });
  await boot.connect();
  await boot.query("create database hotelops");
  await boot.end();
  dataDir = mkdtempSync(join(tmpdir(), "replica-data-"));
  env = { DATABASE_URL: primary.url("hotelops"), DATA_DIR: dataDir };
  admin = await createApp(loadConfig({ ...env, ROLE: "api", PORT: "0", HOST: "127.0.0.1" }), {
    logger: pino({ level: "silent" }),
  });
  hotel = await smallHotel(admin, `http://127.0.0.1:${admin.port}`);
  partner = await createTestClient(admin, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [hotel.property.code],
    scopes: ["availability.read", "reservations.read", "ari.read"],
    approved: true,
  });
  replica = await startReplica(primary);
  api = await startService({
    ...env,
    ROLE: "api",
    DATABASE_REPLICA_URL: replica.url("hotelops"),
    REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
  });
}, 120_000);
afterAll(async () => {
  killAllServices();
  try {
    await admin?.close();
  } finally {
    replica?.remove();
    primary?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const partnerGet = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${api.base}/api/v1/properties/${hotel.property.code}${path}`, {
    headers: { authorization: `Bearer ${partner.accessToken}` },
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`);
  return JSON.parse(body) as T;
};
type Availability = { roomTypes: { code: string; days: { date: string; sold: number }[] }[] };
const soldOn = async (date: string): Promise<number> =>
  (await partnerGet<Availability>("/availability?from=2027-03-01&to=2027-03-20")).roomTypes[0]!.days.find(
    (d) => d.date === date,
  )!.sold;
type Feed = { data: { externalReference: string | null; code: string }[]; nextCursor: string };

describe("partner reads with DATABASE_REPLICA_URL (a streaming replica)", () => {
  it(
    "availability comes from the replica while it keeps up and from the primary once its replay lags beyond REPLICA_MAX_LAG_MS; the feed never skips a change",
    { timeout: 120_000 },
    async () => {
      expect(await soldOn("2027-03-10")).toBe(0);
      // the service's replica pool holds connections on the replica: the read went there
      await until(
        async () =>
          (
            await onReplica<{ n: number }>(
              "select count(*)::int as n from pg_stat_activity where application_name = 'hotelops-replica'",
            )
          )[0]!.n > 0,
        10_000,
        "reads on the replica",
      );
      const feed0 = await partnerGet<Feed>("/reservations?limit=500");

      // the replica stops replaying; a reservation is committed on the primary
      await onReplica("select pg_wal_replay_pause()");
      const created = await hotel.createReservation(hotel.stay());
      expect(created.status, await created.clone().text()).toBe(201);
      const code = ((await created.json()) as { code: string }).code;
      // the feed is read from the primary: the change is on the next page at once, whatever the replica holds
      const feed1 = await partnerGet<Feed>(`/reservations?limit=500&cursor=${feed0.nextCursor}`);
      expect(feed1.data.map((r) => r.code)).toContain(code);
      // the replica has not replayed it
      expect(
        (await onReplica<{ n: number }>(`select count(*)::int as n from reservations where code = '${code}'`))[0]!.n,
      ).toBe(0);
      // past the bound availability is read from the primary: the new sale shows although the replica lags
      await new Promise((r) => setTimeout(r, MAX_LAG_MS + 500));
      expect(await soldOn("2027-03-10")).toBe(1);

      await onReplica("select pg_wal_replay_resume()");
      await until(
        async () =>
          (await onReplica<{ n: number }>(`select count(*)::int as n from reservations where code = '${code}'`))[0]!
            .n === 1,
        20_000,
        "the replica replayed the sale",
      );
      expect(await soldOn("2027-03-10")).toBe(1);
    },
  );

  it(
    "ARI and reports come from the replica while it is within the bound and from the primary past it; the ARI feed from the primary",
    { timeout: 120_000 },
    async () => {
      // a second API whose bound a paused replica stays within for the whole test
      const wide = await startService({
        ...env,
        ROLE: "api",
        DATABASE_REPLICA_URL: replica.url("hotelops"),
        REPLICA_MAX_LAG_MS: "600000",
      });
      const get = async <T>(on: ServiceProcess, path: string, token = partner.accessToken): Promise<T> => {
        const res = await fetch(`${on.base}${path}`, { headers: { authorization: `Bearer ${token}` } });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`);
        return JSON.parse(body) as T;
      };
      type Ari = { roomTypes: { ratePlans: { days: { date: string; priceMinor: number | string | null }[] }[] }[] };
      const priceOn = async (on: ServiceProcess, date: string) =>
        (
          await get<Ari>(on, `/api/v1/properties/${hotel.property.code}/ari?from=2027-03-01&to=2027-03-31`)
        ).roomTypes[0]!.ratePlans[0]!.days.find((d) => d.date === date)!.priceMinor?.toString();
      const arrivals = async (on: ServiceProcess): Promise<number> => {
        const res = await fetch(`${on.base}/api/mobile/v1/reports`, {
          method: "POST",
          headers: { authorization: `Bearer ${hotel.manager.accessToken}`, "content-type": "application/json" },
          body: JSON.stringify({ reportId: "arrivals", start: "2027-03-01", end: "2027-03-31" }),
        });
        const body = await res.text();
        expect(res.status, body).toBe(200);
        return (JSON.parse(body) as { rowCount: number }).rowCount;
      };
      type Changes = { data: { from: string; to: string; reason: string }[]; nextCursor: string };
      try {
        const price0 = await priceOn(wide, "2027-03-20");
        const arrivals0 = await arrivals(wide);
        expect(await priceOn(api, "2027-03-20")).toBe(price0);
        expect(await arrivals(api)).toBe(arrivals0);
        const feed0 = await get<Changes>(wide, `/api/v1/properties/${hotel.property.code}/ari/changes?limit=500`);

        // the replica stops replaying; a new price and a new arrival are committed on the primary
        await onReplica("select pg_wal_replay_pause()");
        await admin.services.inventory.setPrices(hotel.property.id, {
          ratePlanId: hotel.ratePlanId,
          roomTypeId: hotel.roomTypeId,
          from: "2027-03-20",
          to: "2027-03-21",
          amountMinor: 31415n,
        });
        const created = await hotel.createReservation(
          hotel.stay({ arrivalDate: "2027-03-05", departureDate: "2027-03-06", totalMinor: 25000 }),
        );
        expect(created.status, await created.clone().text()).toBe(201);
        // the ARI feed is read from the primary: the price change is on the next page at once
        const feed1 = await get<Changes>(
          wide,
          `/api/v1/properties/${hotel.property.code}/ari/changes?limit=500&cursor=${feed0.nextCursor}`,
        );
        expect(feed1.data.map((c) => [c.reason, c.from])).toContainEqual(["rate", "2027-03-20"]);
        // within its bound the wide API reads ARI and reports from the replica, which has not replayed them
        expect(await priceOn(wide, "2027-03-20")).toBe(price0);
        expect(await arrivals(wide)).toBe(arrivals0);
        // past its bound the other API reads them from the primary
        await new Promise((r) => setTimeout(r, MAX_LAG_MS + 500));
        expect(await priceOn(api, "2027-03-20")).toBe("31415");
        expect(await arrivals(api)).toBe(arrivals0 + 1);

        await onReplica("select pg_wal_replay_resume()");
        await until(
          async () => (await priceOn(wide, "2027-03-20")) === "31415",
          20_000,
          "the replica replayed the price",
        );
        expect(await arrivals(wide)).toBe(arrivals0 + 1);
      } finally {
        await onReplica("select pg_wal_replay_resume()").catch(() => undefined);
        wide.child.kill("SIGTERM");
        await wide.exited;
      }
    },
  );

  it("a replica that goes away: availability is answered from the primary, no error", { timeout: 60_000 }, async () => {
    replica.stop();
    try {
      for (let i = 0; i < 3; i++) expect(await soldOn("2027-03-10")).toBe(1);
    } finally {
      replica.start();
    }
  });
});
