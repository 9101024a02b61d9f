import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { doubleRoomsAtBar, roomNumbers } from "../helpers/hotel-fixtures.ts";

// The feeds' cursor promise against the case that breaks a naive numbering: a change that took its feed position
// early and commits late (the night audit marks a no-show, then waits on the next reservation's row lock, held here
// by the test), a change started later by another writer (a new booking) that would commit first if nothing ordered
// them, and a partner paging both feeds in between. Whatever numbers the feeds use, the partner must end up with
// every change once: the no-shows, the new booking and all their ARI entries, none skipped, none repeated.

let app: TestApp;
let token: string;
let property: { id: string; code: string };
let rt: { id: string };
let rp: { id: string };

const sql = async <R>(text: string, params: unknown[] = []): Promise<R[]> =>
  (await app.db.pool.query(text, params)).rows as R[];

/** Every page of a feed from `cursor` to its end (one item per page): the items and the cursor to go on from. */
async function walk<T>(path: string, cursor: string): Promise<{ items: T[]; cursor: string }> {
  const items: T[] = [];
  for (;;) {
    const res = await fetch(`${app.baseUrl}${path}?limit=1${cursor === "" ? "" : `&cursor=${cursor}`}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: T[]; nextCursor: string; hasMore: boolean };
    items.push(...page.data);
    cursor = page.nextCursor;
    if (!page.hasMore) return { items, cursor };
  }
}

const book = (arrivalDate: string, departureDate: string, reference: string) =>
  app.services.reservations.create(
    { propertyId: property.id, canOverridePrice: false },
    {
      source: "API",
      channel: null,
      externalReference: reference,
      holderName: "Guest",
      arrivalDate,
      departureDate,
      rooms: [{ roomTypeId: rt.id, ratePlanId: rp.id, adults: 1 }],
      status: "GUARANTEED",
    },
  );

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "FEED-ORDER", businessDate: "2027-01-01" });
  const hotel = await doubleRoomsAtBar(app.services.inventory, property.id, roomNumbers(100, 104), 2, {
    from: "2027-01-01",
    to: "2027-02-01",
    amountMinor: 10000n,
  });
  rt = { id: hotel.roomTypeId };
  rp = { id: hotel.ratePlanId };
  const client = await createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["reservations.read", "ari.read"],
  });
  token = client.accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("feed cursors when a later transaction commits first", () => {
  it("a partner paging both feeds meanwhile gets every change once", async () => {
    const first = await book("2027-01-01", "2027-01-03", "NS-1");
    const second = await book("2027-01-01", "2027-01-02", "NS-2");
    const reservationsPath = `/api/v1/properties/${property.code}/reservations`;
    const ariPath = `/api/v1/properties/${property.code}/ari/changes`;
    // the partner is up to date before the audit starts
    let reservationFeed = await walk<{ id: string }>(reservationsPath, "");
    let ariFeed = await walk<{ seq: string }>(ariPath, "");
    const ariBefore = new Set(ariFeed.items.map((c) => c.seq));
    // The audit marks the no-shows in the order of their codes: the second one's row is held, so the audit waits
    // there with the first no-show written (its feed positions taken) and uncommitted.
    const [held, waiting] = [...[first, second].map((b) => b.reservation)].sort((a, b) => (a.code < b.code ? 1 : -1));
    const lock = new pg.Client({ connectionString: app.config.databaseUrl });
    await lock.connect();
    try {
      await lock.query("begin");
      await lock.query("select 1 from reservations where property_id = $1 and id = $2 for update", [
        property.id,
        held!.id,
      ]);
      const audit = app.services.nightAudit.run(property.id, "night_audit:user:test", {
        expectedBusinessDate: "2027-01-01",
      });
      const lockWaiters = async () =>
        (
          await sql<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))",
            [(await lock.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid],
          )
        )[0]!.n;
      for (let i = 0; (await lockWaiters()) === 0; i++) {
        expect(i).toBeLessThan(200);
        await new Promise((r) => setTimeout(r, 50));
      }
      // A booking started after the audit's no-show; where nothing orders the two it commits first.
      let booked = false;
      const later = book("2027-01-05", "2027-01-06", "LATER").then((b) => {
        booked = true;
        return b;
      });
      // it either commits or waits on a lock the audit holds
      const blockedOnLock = async () =>
        (
          await sql<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
          )
        )[0]!.n >= 2;
      for (let i = 0; !booked && !(await blockedOnLock()); i++) {
        expect(i).toBeLessThan(200);
        await new Promise((r) => setTimeout(r, 50));
      }
      // the partner pages both feeds while the audit is uncommitted
      reservationFeed = await walk<{ id: string }>(reservationsPath, reservationFeed.cursor).then((p) => ({
        items: [...reservationFeed.items, ...p.items],
        cursor: p.cursor,
      }));
      ariFeed = await walk<{ seq: string }>(ariPath, ariFeed.cursor).then((p) => ({
        items: [...ariFeed.items, ...p.items],
        cursor: p.cursor,
      }));
      await lock.query("rollback");
      const [summary, last] = await Promise.all([audit, later]);
      expect(summary.summary.noShowsMarked).toBe(2);
      expect(waiting).toBeDefined();

      const reservationsRest = await walk<{ id: string }>(reservationsPath, reservationFeed.cursor);
      const ariRest = await walk<{ seq: string }>(ariPath, ariFeed.cursor);
      const reservationIds = [...reservationFeed.items, ...reservationsRest.items].map((r) => r.id);
      // the two bookings before the audit, then each once more: both no-shows and the later booking
      const changedAfter = reservationIds.slice(2);
      expect(reservationIds.slice(0, 2).sort()).toEqual([first.reservation.id, second.reservation.id].sort());
      expect(changedAfter.sort()).toEqual([first.reservation.id, second.reservation.id, last.reservation.id].sort());
      const seqs = [...ariFeed.items, ...ariRest.items].map((c) => c.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      const stored = await sql<{ seq: string }>("select seq::text as seq from ari_changes where property_id = $1", [
        property.id,
      ]);
      expect([...seqs].sort()).toEqual(stored.map((r) => r.seq).sort());
      // releasing two no-shows and taking the later booking's night: three entries after the ones seen before
      expect(seqs.filter((s) => !ariBefore.has(s))).toHaveLength(3);
    } finally {
      await lock.end();
    }
  });
});
