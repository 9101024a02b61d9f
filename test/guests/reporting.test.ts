import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { GuestService } from "../../gen/hotelops/guest/v1/guest_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/lib/logger.ts";
import type { TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { doubleRoomsAtBar, roomNumbers } from "../helpers/hotel-fixtures.ts";
import { personalDataIn } from "../helpers/personal-data.ts";
import { restCaller } from "../helpers/rest.ts";

// Guest reporting to the police or gendarmerie (KBS): every check-in and check-out of each occupant queues a report in
// the movement's transaction; the HTTPS sender posts it to a loopback receiver (the tests' stand-in for the
// authority), which checks the credentials and fields; a receiver answering 500 is retried, then the report is
// failed and listed; incomplete occupant records are allowed and listed on ListUnreportedGuests, the dashboard and the
// night audit's pre-checks; ListGuestReports on REST, Connect and gRPC; no personal data in the logs (trace level).

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;
const lines: string[] = [];
let manager: string, desk: string, viewer: string, otherManager: string;
let propertyCode: string, otherCode: string;
let roomTypeId: string, ratePlanId: string;
let roomIds: string[] = [];
let nextRoom = 0;
let connect: Client<typeof GuestService>, grpc: Client<typeof GuestService>;
let reservations: Client<typeof ReservationService>;

/** The loopback receiver: what arrived, and a 500 for a guest named "Failing". */
interface Arrival {
  headers: http.IncomingHttpHeaders;
  body: Json;
}
const arrivals: Arrival[] = [];
let receiver: http.Server;
const user = "hotel-kbs-user";
const password = `pw-${randomBytes(6).toString("hex")}`;

async function startReceiver(): Promise<string> {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
      arrivals.push({ headers: req.headers, body });
      const expected = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
      if (req.headers.authorization !== expected) {
        res.writeHead(401).end();
        return;
      }
      if (body.guest?.familyName === "Failing") {
        res.writeHead(500).end("authority down");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ reference: `KBS-${String(body.id).slice(0, 8)}` }));
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/kbs/notifications`;
}

const rest = restCaller(() => app.baseUrl);

let seq = 0;
async function guest(fields: Json = {}): Promise<string> {
  seq++;
  const g = await rest("POST", "/api/panel/v1/guests", desk, {
    givenName: "Ayse",
    familyName: "Yilmaz",
    nationality: "TR",
    birthDate: "1961-07-23",
    documentType: "PASSPORT",
    documentNumber: `U9876543${seq % 10}X${seq}`,
    documentCountry: "TR",
    ...fields,
  });
  if (g.status !== 201) throw new Error(`guest: ${g.status} ${JSON.stringify(g.body)}`);
  return g.body.guest.id as string;
}

/** A reservation for `adults` arriving on the business date, its guests on the line. */
async function stay(guestIds: string[], adults = 2): Promise<{ id: string; lineId: string; roomId: string }> {
  const r = await rest("POST", "/api/mobile/v1/reservations", manager, {
    holderName: "Ayse Yilmaz",
    arrivalDate: "2027-03-01",
    departureDate: "2027-03-03",
    roomTypeId,
    ratePlanId,
    adults,
    totalMinor: 50000,
    currency: "TRY",
  });
  if (r.status !== 201) throw new Error(`reservation: ${r.status} ${JSON.stringify(r.body)}`);
  const lineId = r.body.rooms[0].id as string;
  for (const id of guestIds) {
    const linked = await rest("POST", `/api/panel/v1/reservations/${r.body.id}/rooms/${lineId}/guests`, desk, {
      guestId: id,
    });
    expect(linked.status).toBe(200);
  }
  return { id: r.body.id as string, lineId, roomId: roomIds[nextRoom++]! };
}

const checkIn = (s: { id: string; lineId: string; roomId: string }) =>
  reservations.checkInRoomLine(
    { reservationId: s.id, reservationRoomId: s.lineId, roomId: s.roomId },
    { headers: bearer(desk) },
  );
const checkOut = (s: { id: string; lineId: string }) =>
  reservations.checkOutRoomLine({ reservationId: s.id, reservationRoomId: s.lineId }, { headers: bearer(desk) });

async function reportsOf(lineId: string): Promise<Json[]> {
  const { rows } = await app.deps.db.pool.query(
    `select id, guest_id as "guestId", movement, status, missing, attempts, reference, last_error as "lastError", sealed
       from guest_reports where reservation_room_id = $1 order by created_at, id`,
    [lineId],
  );
  return rows as Json[];
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  const endpoint = await startReceiver();
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: await freshDatabaseUrl(),
    SHUTDOWN_GRACE_MS: "2000",
    RATE_LIMIT_STAFF_PER_MINUTE: "100000",
    RATE_LIMIT_ANON_PER_MINUTE: "100000",
    KBS_SENDER: "https",
    KBS_ENDPOINT: endpoint,
    KBS_USERNAME: user,
    KBS_PASSWORD: password,
    KBS_RETRY_LIMIT: "2",
    KBS_RETRY_DELAY_SECONDS: "1",
    KBS_RETRY_DELAY_MAX_SECONDS: "1",
  });
  const created = await createApp(config, { logger: createLogger("trace", capture) });
  app = Object.assign(created, { baseUrl: `http://127.0.0.1:${created.port}`, port: created.port! });
  const group = `KBS-${randomBytes(3).toString("hex")}`;
  const property = await createTestProperty(app, { groupCode: group, businessDate: "2027-03-01" });
  const other = await createTestProperty(app, { groupCode: `${group}-B` });
  [propertyCode, otherCode] = [property.code, other.code];
  const fixture = await doubleRoomsAtBar(app.services.inventory, property.id, roomNumbers(101, 130), 3);
  [roomTypeId, ratePlanId, roomIds] = [fixture.roomTypeId, fixture.ratePlanId, fixture.roomIds];
  const session = async (code: string, role: string) =>
    (await createStaffSession(app, { propertyCode: code, role })).accessToken;
  manager = await session(property.code, "manager");
  desk = await session(property.code, "front_desk");
  viewer = await session(property.code, "viewer");
  otherManager = await session(other.code, "manager");
  const t = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
  connect = createClient(GuestService, t);
  reservations = createClient(ReservationService, t);
  grpc = createClient(GuestService, createGrpcTransport({ baseUrl: app.baseUrl }));
}, 60_000);
afterAll(async () => {
  await app?.close();
  await new Promise((r) => receiver?.close(r));
});

describe("guest reports on check-in and check-out", () => {
  it("queues one report per occupant with the check-in, sends it with credentials, records the reference", async () => {
    const s = await stay([await guest(), await guest({ givenName: "Mehmet", nationality: "DE" })]);
    await checkIn(s);
    // both rows and both jobs were committed with the check-in
    const queued = await reportsOf(s.lineId);
    expect(queued.map((r) => r.movement)).toEqual(["check_in", "check_in"]);
    expect(queued.every((r) => ["pending", "sent"].includes(r.status))).toBe(true);
    // personal fields are sealed at rest
    for (const r of queued) expect(r.sealed).not.toMatch(/U9876543|1961-07-23|Yilmaz/);
    const { rows: jobs } = await app.deps.db.pool.query(
      `select count(*)::int as n from pgboss.job where name = 'guests.reporting' and data->>'reportId' = any($1)`,
      [queued.map((r) => r.id)],
    );
    expect(jobs[0].n).toBe(2);

    const sent = await until(
      () => reportsOf(s.lineId),
      (rows) => rows.every((r) => r.status === "sent"),
    );
    expect(sent.map((r) => r.status)).toEqual(["sent", "sent"]);
    for (const r of sent) {
      expect(r.reference).toBe(`KBS-${String(r.id).slice(0, 8)}`);
      expect(r.attempts).toBe(1);
      const got = arrivals.filter((a) => a.body.id === r.id);
      expect(got.length).toBe(1);
      expect(got[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`);
      expect(got[0]!.headers["idempotency-key"]).toBe(r.id);
      expect(got[0]!.headers["content-type"]).toBe("application/json");
      expect(got[0]!.body).toMatchObject({
        propertyCode,
        movement: "check_in",
        businessDate: "2027-03-01",
        roomNumber: "101",
        arrivalDate: "2027-03-01",
        departureDate: "2027-03-03",
        guest: { familyName: "Yilmaz", birthDate: "1961-07-23", documentType: "PASSPORT", documentCountry: "TR" },
      });
      expect(got[0]!.body.guest.documentNumber).toMatch(/^U9876543/);
    }
    expect(
      arrivals
        .filter((a) => sent.some((r) => r.id === a.body.id))
        .map((a) => a.body.guest.nationality)
        .sort(),
    ).toEqual(["DE", "TR"]);

    // the check-out reports both occupants again
    await checkOut(s);
    const out = await until(
      () => reportsOf(s.lineId),
      (rows) => rows.length === 4 && rows.every((r) => r.status === "sent"),
    );
    expect(out.map((r) => r.movement)).toEqual(["check_in", "check_in", "check_out", "check_out"]);
    expect(arrivals.filter((a) => a.body.movement === "check_out" && out.some((r) => r.id === a.body.id)).length).toBe(
      2,
    );
  }, 60_000);

  it("a check-in that rolls back leaves no report and no job", async () => {
    const s = await stay([await guest(), await guest()]);
    const pool = app.deps.db.pool;
    // the check-in's last statements (its domain events) fail for this reservation: the whole transaction rolls back
    await pool.query(`create or replace function test_refuse_check_in() returns trigger language plpgsql as $$
      begin if new.type = 'guest.checked_in' and new.data::text like '%${s.id}%' then raise exception 'refused by test'; end if;
      return new; end $$`);
    await pool.query(`create trigger test_refuse_check_in before insert on domain_events for each row
      execute function test_refuse_check_in()`);
    try {
      const err = await checkIn(s).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
    } finally {
      await pool.query(`drop trigger test_refuse_check_in on domain_events`);
    }
    expect(await reportsOf(s.lineId)).toEqual([]);
    const { rows } = await pool.query(
      `select count(*)::int as n from pgboss.job j where j.name = 'guests.reporting'
          and not exists (select 1 from guest_reports r where r.id::text = j.data->>'reportId')`,
    );
    expect(rows[0].n).toBe(0);
    // and the same check-in then goes through with its reports
    await checkIn(s);
    expect((await reportsOf(s.lineId)).length).toBe(2);
  });

  it("a receiver answering 500 is retried with backoff, then the report is failed and listed", async () => {
    const s = await stay([await guest({ familyName: "Failing" })], 1);
    await checkIn(s);
    const [failed] = await until(
      () => reportsOf(s.lineId),
      (rows) => rows[0]?.status === "failed",
      45_000,
    );
    expect(failed).toMatchObject({ status: "failed", attempts: 3, lastError: "receiver answered HTTP 500" });
    expect(arrivals.filter((a) => a.body.id === failed!.id).length).toBe(3);

    const listed = await rest("GET", "/api/panel/v1/guest-reports?status=failed", desk);
    expect(listed.status).toBe(200);
    const mine = (listed.body.reports as Json[]).find((r) => r.id === failed!.id);
    expect(mine).toMatchObject({
      reservationId: s.id,
      reservationRoomId: s.lineId,
      movement: "check_in",
      status: "failed",
      attempts: 3,
      lastError: "receiver answered HTTP 500",
      guestName: "Ayse Failing",
    });
    expect(JSON.stringify(listed.body)).not.toMatch(/U9876543|1961-07-23/);
    const unreported = await rest("GET", "/api/panel/v1/guest-reports/unreported", desk);
    expect(unreported.body.failedReports).toBeGreaterThanOrEqual(1);
    expect(unreported.body.unreported).toContainEqual(
      expect.objectContaining({ reservationRoomId: s.lineId, reason: "failed", guestName: "Ayse Failing" }),
    );
    // the failure is in the audit trail
    const { rows } = await app.deps.db.pool.query(
      `select action from audit_changes where entity_type = 'guest_report' and entity_id = $1`,
      [failed!.id],
    );
    expect(rows).toEqual([{ action: "fail" }]);
  }, 60_000);

  it("a check-in without a complete occupant record is allowed and listed; a guest added later is reported", async () => {
    const none = await stay([], 1);
    await checkIn(none);
    const partial = await stay([await guest({ birthDate: "", nationality: "" })], 1);
    await checkIn(partial);
    expect(await reportsOf(none.lineId)).toMatchObject([{ guestId: null, status: "incomplete", missing: ["guests"] }]);
    expect(await reportsOf(partial.lineId)).toMatchObject([
      { status: "incomplete", missing: ["birthDate", "nationality"] },
    ]);
    const list = await rest("GET", "/api/panel/v1/guest-reports/unreported", desk);
    expect(list.status).toBe(200);
    expect(list.body.unreported).toContainEqual(
      expect.objectContaining({ reservationRoomId: none.lineId, reason: "no_guests", roomNumber: expect.any(String) }),
    );
    expect(list.body.unreported).toContainEqual(
      expect.objectContaining({ reservationRoomId: partial.lineId, reason: "incomplete" }),
    );
    // the mobile dashboard and the night audit's pre-checks show them
    const dashboard = await rest("GET", "/api/mobile/v1/dashboard", desk);
    expect(dashboard.status).toBe(200);
    expect(dashboard.body.unreportedGuests).toBeGreaterThanOrEqual(2);
    expect(dashboard.body.failedGuestReports).toBeGreaterThanOrEqual(0);
    const audit = await rest("GET", "/api/mobile/v1/night-audit", manager);
    const check = (audit.body.checks as Json[]).find((c) => c.id === "guests_not_reported");
    expect(check).toMatchObject({ status: "warning" });
    expect(check!.count).toBeGreaterThanOrEqual(2);
    expect(audit.body.canRun).toBe(true);

    // a complete guest put on the in-house line is reported at once, and the line leaves the list
    const complete = await guest();
    const linked = await rest("POST", `/api/panel/v1/reservations/${none.id}/rooms/${none.lineId}/guests`, desk, {
      guestId: complete,
    });
    expect(linked.status).toBe(200);
    const rows = await until(
      () => reportsOf(none.lineId),
      (r) => r.length === 2 && r[1]!.status === "sent",
    );
    expect(rows[1]).toMatchObject({ guestId: complete, movement: "check_in", status: "sent" });
    const after = await rest("GET", "/api/panel/v1/guest-reports/unreported", desk);
    expect((after.body.unreported as Json[]).some((u) => u.reservationRoomId === none.lineId)).toBe(false);
  }, 60_000);
});

describe("ListGuestReports", () => {
  it("rest: pages by cursor, filters by status, checks status, permission and property", async () => {
    const first = await rest("GET", "/api/panel/v1/guest-reports?limit=2", desk);
    expect(first.status).toBe(200);
    expect(first.body.reports).toHaveLength(2);
    expect(first.body.nextCursor).not.toBe("");
    const second = await rest("GET", `/api/panel/v1/guest-reports?limit=2&cursor=${first.body.nextCursor}`, desk);
    expect(second.status).toBe(200);
    const ids = [...first.body.reports, ...second.body.reports].map((r: Json) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const sent = await rest("GET", "/api/panel/v1/guest-reports?status=sent", manager);
    expect((sent.body.reports as Json[]).every((r) => r.status === "sent" && r.reference.startsWith("KBS-"))).toBe(
      true,
    );
    const bad = await rest("GET", "/api/panel/v1/guest-reports?status=lost", desk);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid_argument" });
    expect(JSON.stringify(bad.body)).toContain("status");
    expect((await rest("GET", "/api/panel/v1/guest-reports?cursor=zz", desk)).status).toBe(400);
    expect((await rest("GET", "/api/panel/v1/guest-reports?limit=201", desk)).status).toBe(400);
    expect((await rest("GET", "/api/panel/v1/guest-reports", viewer)).status).toBe(403);
    expect((await rest("GET", `/api/panel/v1/guest-reports?propertyCode=${otherCode}`, desk)).status).toBe(404);
    // the other property's manager sees none of these
    const foreign = await rest("GET", "/api/panel/v1/guest-reports", otherManager);
    expect(foreign.body.reports ?? []).toEqual([]);
  });

  for (const face of ["connect", "grpc"] as const)
    it(`${face}: lists, filters, refuses a bad status, another property and a caller without guests.report`, async () => {
      const client = face === "connect" ? connect : grpc;
      const h = { headers: bearer(desk) };
      const all = await client.listGuestReports({ limit: 200 }, h);
      expect(all.reports.length).toBeGreaterThanOrEqual(5);
      const failed = await client.listGuestReports({ status: "failed" }, h);
      expect(failed.reports.every((r) => r.status === "failed")).toBe(true);
      const sent = all.reports.find((r) => r.status === "sent")!;
      expect(sent.sentAt).toBeDefined();
      expect(sent.reference).toMatch(/^KBS-/);
      const unreported = await client.listUnreportedGuests({ propertyCode }, h);
      expect(unreported.unreported.length).toBeGreaterThanOrEqual(1);
      const codeOf = async (call: () => Promise<unknown>) =>
        ((await call().catch((e: unknown) => e)) as ConnectError).code;
      expect(await codeOf(() => client.listGuestReports({ status: "lost" }, h))).toBe(Code.InvalidArgument);
      expect(await codeOf(() => client.listGuestReports({ propertyCode: otherCode }, h))).toBe(Code.NotFound);
      expect(await codeOf(() => client.listGuestReports({}, { headers: bearer(viewer) }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => client.listUnreportedGuests({}, { headers: bearer(viewer) }))).toBe(
        Code.PermissionDenied,
      );
    });
});

describe("ResendGuestReport", () => {
  const failedReportOf = async (lineId: string) =>
    (
      await until(
        () => reportsOf(lineId),
        (rows) => rows[0]?.status === "failed",
        45_000,
      )
    )[0]!;
  const resendPath = (id: string) => `/api/panel/v1/guest-reports/${id}/resend`;

  it("rest: a failed report is sent again from the corrected record; the first stays failed, with a resend entry", async () => {
    const guestId = await guest({ familyName: "Failing" });
    const s = await stay([guestId], 1);
    await checkIn(s);
    const first = await failedReportOf(s.lineId);
    expect(first).toMatchObject({ status: "failed", attempts: 3 });

    expect((await rest("POST", resendPath(first.id), viewer, {})).status).toBe(403);
    const foreign = await rest("POST", resendPath(first.id), otherManager, {});
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toMatchObject({ code: "not_found" });
    expect((await rest("POST", resendPath("not-an-id"), desk, {})).status).toBe(404);

    // the record corrected (the receiver refuses "Failing"), then sent again
    expect((await rest("PATCH", `/api/panel/v1/guests/${guestId}`, desk, { familyName: "Fixed" })).status).toBe(200);
    const resent = await rest("POST", resendPath(first.id), desk, {});
    expect(resent.status).toBe(200);
    expect(resent.body.report).toMatchObject({
      reservationId: s.id,
      reservationRoomId: s.lineId,
      guestId,
      guestName: "Ayse Fixed",
      movement: "check_in",
      status: "pending",
      attempts: 0,
    });
    expect(resent.body.report.id).not.toBe(first.id);
    const rows = await until(
      () => reportsOf(s.lineId),
      (r) => r.length === 2 && r[1]!.status === "sent",
    );
    expect(rows.map((r) => r.status)).toEqual(["failed", "sent"]);
    const arrived = arrivals.find((a) => a.body.id === rows[1]!.id)!;
    expect(arrived.body).toMatchObject({ movement: "check_in", guest: { familyName: "Fixed" } });

    // once is enough: the first is superseded, the second is sent
    const again = await rest("POST", resendPath(first.id), desk, {});
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "conflict" });
    expect(again.body.error.message).toContain("newer report");
    const sent = await rest("POST", resendPath(rows[1]!.id), desk, {});
    expect(sent.status).toBe(409);
    expect(sent.body.error.message).toContain("this one is sent");

    // the line leaves the unreported list; the resend is in the audit trail, by the person who asked
    const unreported = await rest("GET", "/api/panel/v1/guest-reports/unreported", desk);
    expect((unreported.body.unreported as Json[]).some((u) => u.reservationRoomId === s.lineId)).toBe(false);
    const { rows: audit } = await app.deps.db.pool.query(
      `select action, actor_kind as "actorKind", changes::text as changes
         from audit_changes where entity_type = 'guest_report' and entity_id = $1 order by at`,
      [first.id],
    );
    expect(audit.map((a) => a.action)).toEqual(["fail", "resend"]);
    expect(audit[1]).toMatchObject({ actorKind: "user", changes: expect.stringContaining(rows[1]!.id) });
  }, 90_000);

  for (const face of ["connect", "grpc"] as const)
    it(`${face}: an incomplete report is sent again once the record is complete; a line without guests, another property and a caller without guests.report are refused`, async () => {
      const client = face === "connect" ? connect : grpc;
      const h = { headers: bearer(desk) };
      const codeOf = async (call: () => Promise<unknown>) =>
        ((await call().catch((e: unknown) => e)) as ConnectError).code;
      const guestId = await guest({ birthDate: "", nationality: "" });
      const partial = await stay([guestId], 1);
      await checkIn(partial);
      const [incomplete] = await reportsOf(partial.lineId);
      expect(incomplete).toMatchObject({ status: "incomplete", missing: ["birthDate", "nationality"] });
      // still incomplete: sent again, it is incomplete again (nothing goes to the authority)
      const still = await client.resendGuestReport({ guestReportId: incomplete!.id }, h);
      expect(still.report).toMatchObject({ status: "incomplete", missing: ["birthDate", "nationality"] });
      expect(await codeOf(() => client.resendGuestReport({ guestReportId: incomplete!.id }, h))).toBe(
        Code.FailedPrecondition,
      );
      expect(
        (await rest("PATCH", `/api/panel/v1/guests/${guestId}`, desk, { birthDate: "1970-01-02", nationality: "TR" }))
          .status,
      ).toBe(200);
      expect(
        await codeOf(() => client.resendGuestReport({ guestReportId: still.report!.id, propertyCode: otherCode }, h)),
      ).toBe(Code.NotFound);
      expect(
        await codeOf(() => client.resendGuestReport({ guestReportId: still.report!.id }, { headers: bearer(viewer) })),
      ).toBe(Code.PermissionDenied);
      const resent = await client.resendGuestReport({ guestReportId: still.report!.id, propertyCode }, h);
      expect(resent.report).toMatchObject({ guestId, status: "pending", missing: [] });
      const rows = await until(
        () => reportsOf(partial.lineId),
        (r) => r.length === 3 && r[2]!.status === "sent",
      );
      expect(rows.map((r) => r.status)).toEqual(["incomplete", "incomplete", "sent"]);

      // a line checked in without guests: put them on the line instead
      const none = await stay([], 1);
      await checkIn(none);
      const [empty] = await reportsOf(none.lineId);
      const refused = (await client
        .resendGuestReport({ guestReportId: empty!.id }, h)
        .catch((e: unknown) => e)) as ConnectError;
      expect(refused.code).toBe(Code.FailedPrecondition);
      expect(refused.rawMessage).toContain("without guests");
    }, 60_000);
});

describe("personal data", () => {
  it("never reaches a log line, even at trace level and with failing sends", () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes("guest report not delivered"))).toBe(true);
    expect(personalDataIn(lines)).toEqual([]);
    expect(lines.filter((l) => l.includes(password))).toEqual([]);
  });
});

describe("retention", () => {
  it("the retention job deletes reports past their period, keeps the others, and records its run", async () => {
    const pool = app.deps.db.pool;
    const { rows } = await pool.query(`select id from guest_reports order by created_at limit 2`);
    const [old, young] = rows.map((r: Json) => r.id as string);
    await pool.query(`update guest_reports set keep_until = '2020-12-31' where id = $1`, [old]);
    const runsBefore = await pool.query(
      `select count(*)::int as n from audit_changes where entity_type = 'guest_retention'`,
    );
    await app.boss.pgboss.send("guests.retention", {});
    const runs = await until(
      async () =>
        (
          await pool.query(
            `select changes from audit_changes where entity_type = 'guest_retention' and action = 'run' order by at desc`,
          )
        ).rows as Json[],
      (r) => r.length > runsBefore.rows[0].n,
    );
    expect(runs.length).toBeGreaterThan(runsBefore.rows[0].n);
    expect(JSON.stringify(runs[0]!.changes)).toMatch(/anonymised/);
    expect(JSON.stringify(runs[0]!.changes)).toMatch(/reportsDeleted/);
    const left = await pool.query(`select id from guest_reports where id = any($1::uuid[])`, [[old, young]]);
    expect(left.rows.map((r: Json) => r.id)).toEqual([young]);
  }, 60_000);
});
