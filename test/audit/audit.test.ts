import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AuditService } from "../../gen/hotelops/audit/v1/audit_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { auditPartitions, maintainAuditPartitions } from "../../src/modules/audit/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { smallHotel } from "../helpers/small-hotel.ts";

// The audit trail: every change recorded in its own transaction with its author, face and request id, read with
// audit.read over REST (GET /api/mobile/v1/audit), Connect and gRPC (AuditService.ListChanges).

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;
let hotel: Awaited<ReturnType<typeof smallHotel>>;
let frontDesk: string;
let connect: { audit: Client<typeof AuditService>; reservations: Client<typeof ReservationService> };
let grpc: typeof connect;

beforeAll(async () => {
  app = await startTestApp();
  hotel = await smallHotel(app, app.baseUrl);
  frontDesk = (await createStaffSession(app, { propertyCode: hotel.property.code, role: "front_desk" })).accessToken;
  const c = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
  const g = createGrpcTransport({ baseUrl: app.baseUrl });
  connect = { audit: createClient(AuditService, c), reservations: createClient(ReservationService, c) };
  grpc = { audit: createClient(AuditService, g), reservations: createClient(ReservationService, g) };
});
afterAll(async () => {
  await app?.close();
});

const managerHeaders = (requestId?: string) => ({
  ...bearer(hotel.manager.accessToken),
  ...(requestId !== undefined ? { "x-request-id": requestId } : {}),
});

async function restAudit(query: string, token = hotel.manager.accessToken): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/audit?${query}`, { headers: bearer(token) });
  return { status: res.status, body: (await res.json()) as Json };
}

let booked = 0;
/** A two-night stay over REST, each on nights of its own (the hotel has four rooms). */
async function bookOverRest(requestId: string): Promise<string> {
  const arrival = new Date(Date.UTC(2027, 2, 1 + 2 * booked++));
  const departure = new Date(arrival.getTime() + 2 * 86_400_000);
  const stay = hotel.stay({
    holderName: "Ayse Yilmaz",
    notes: "ayse@example.com",
    arrivalDate: arrival.toISOString().slice(0, 10),
    departureDate: departure.toISOString().slice(0, 10),
  });
  const res = await hotel.createReservation(stay, { "x-request-id": requestId });
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).id as string;
}

const field = (change: Json, name: string): Json | undefined =>
  (change.changes as Json[]).find((f) => f.field === name);

describe("recording", () => {
  it("a REST create appears with the user, face rest, its request id, the fields after and the holder masked", async () => {
    const id = await bookOverRest("audit-rest-1");
    const { status, body } = await restAudit(`entityType=reservation&entityId=${id}`);
    expect(status).toBe(200);
    expect(body.changes).toHaveLength(1);
    const c = body.changes[0];
    expect(c).toMatchObject({
      entityType: "reservation",
      entityId: id,
      action: "create",
      actor: { kind: "user", id: hotel.manager.userId },
      face: "rest",
      requestId: "audit-rest-1",
    });
    expect(field(c, "departureDate")).toEqual({
      field: "departureDate",
      before: null,
      after: "2027-03-03",
      masked: false,
    });
    expect(field(c, "status")?.after).toBe("GUARANTEED");
    expect(field(c, "holderName")).toEqual({ field: "holderName", before: null, after: null, masked: true });
    expect(field(c, "notes")?.masked).toBe(true);
    expect(JSON.stringify(body)).not.toMatch(/Ayse|ayse@example/);
    // its room line is recorded in the same change set
    const lines = await restAudit(`entityType=room_line&actorId=${hotel.manager.userId}`);
    expect(lines.body.changes.some((l: Json) => l.requestId === "audit-rest-1" && l.action === "create")).toBe(true);
  });

  it("a Connect change appears with face connect, its request id and the field before and after", async () => {
    const id = await bookOverRest("audit-rest-2");
    await connect.reservations.updateReservation(
      { propertyCode: hotel.property.code, reservationId: id, departureDate: "2027-03-06", holderName: "Mehmet Kaya" },
      { headers: managerHeaders("audit-connect-1") },
    );
    const page = await connect.audit.listChanges(
      { entityType: "reservation", entityId: id },
      { headers: managerHeaders() },
    );
    const c = page.changes[0]!;
    expect(c.action).toBe("modify");
    expect(c.face).toBe("connect");
    expect(c.requestId).toBe("audit-connect-1");
    expect(c.actor).toMatchObject({ kind: "user", id: hotel.manager.userId });
    const dep = c.changes.find((f) => f.field === "departureDate")!;
    expect(dep.before?.kind).toEqual({ case: "stringValue", value: "2027-03-05" });
    expect(dep.after?.kind).toEqual({ case: "stringValue", value: "2027-03-06" });
    const holder = c.changes.find((f) => f.field === "holderName")!;
    expect(holder.masked).toBe(true);
    expect(holder.before).toBeUndefined();
    expect(page.changes.map((x) => x.action)).toEqual(["modify", "create"]);
  });

  it("a gRPC change appears with face grpc and its request id", async () => {
    const id = await bookOverRest("audit-rest-3");
    await grpc.reservations.cancelReservation(
      { propertyCode: hotel.property.code, reservationId: id },
      { headers: managerHeaders("audit-grpc-1") },
    );
    const page = await grpc.audit.listChanges(
      { propertyCode: hotel.property.code, entityType: "reservation", entityId: id },
      { headers: managerHeaders() },
    );
    const c = page.changes[0]!;
    expect(c).toMatchObject({ action: "cancel", face: "grpc", requestId: "audit-grpc-1" });
    const status = c.changes.find((f) => f.field === "status")!;
    expect(status.before?.kind).toEqual({ case: "stringValue", value: "GUARANTEED" });
    expect(status.after?.kind).toEqual({ case: "stringValue", value: "CANCELLED" });
  });

  it("a partner ARI write and a partner reservation message appear with the client as the author", async () => {
    await setProviderMapping(app.db.pool, {
      propertyCode: hotel.property.code,
      provider: "auditprov",
      kind: "room_type",
      code: "DBL",
      externalCode: "A-DBL",
    });
    await setProviderMapping(app.db.pool, {
      propertyCode: hotel.property.code,
      provider: "auditprov",
      kind: "rate_plan",
      code: "BAR",
      externalCode: "A-BAR",
    });
    const partner = await createTestClient(app, {
      provider: "auditprov",
      propertyCodes: [hotel.property.code],
      scopes: ["ari.write", "reservations.write", "reservations.read"],
      approved: true,
    });
    const ari = await fetch(`${app.baseUrl}/api/v1/properties/${hotel.property.code}/ari`, {
      method: "POST",
      headers: { ...bearer(partner.accessToken), "content-type": "application/json", "x-request-id": "audit-ari-1" },
      body: JSON.stringify({
        changes: [
          { roomTypeCode: "A-DBL", ratePlanCode: "A-BAR", from: "2027-03-20", to: "2027-03-22", priceMinor: 31000 },
        ],
      }),
    });
    expect(ari.status).toBe(200);
    const prices = await restAudit(`entityType=price&actorId=${partner.clientId}`);
    expect(prices.body.changes).toHaveLength(1);
    expect(prices.body.changes[0]).toMatchObject({
      action: "set",
      actor: { kind: "partner", id: partner.clientId },
      face: "rest",
      requestId: "audit-ari-1",
    });
    expect(field(prices.body.changes[0], "priceMinor")?.after).toBe("31000");

    const sent = await fetch(`${app.baseUrl}/api/v1/properties/${hotel.property.code}/reservation-events`, {
      method: "POST",
      headers: { ...bearer(partner.accessToken), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        eventType: "NEW",
        externalReference: "AUDIT-BK-1",
        arrivalDate: "2027-04-29",
        departureDate: "2027-04-30",
        currency: "TRY",
        holder: { name: "Channel Guest" },
        channel: "Booking.com",
        rooms: [{ roomTypeCode: "A-DBL", ratePlanCode: "A-BAR", adults: 2, children: 0, amountMinor: 25000 }],
        totalMinor: 25000,
      }),
    });
    expect(sent.status).toBe(202);
    const eventId = ((await sent.json()) as Json).eventId as string;
    let found: Json | undefined;
    for (let i = 0; i < 200 && found === undefined; i++) {
      const page = await restAudit(`entityType=reservation&actorId=${partner.clientId}`);
      found = page.body.changes[0];
      if (found === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(found).toMatchObject({
      action: "create",
      actor: { kind: "partner", id: partner.clientId },
      face: "job",
      requestId: eventId,
    });
    expect(field(found!, "channel")?.after).toBe("Booking.com");
  });

  it("room status, out-of-order periods, folio postings and their reversal are recorded with before and after", async () => {
    const p = hotel.property.id;
    const [room] = await app.services.inventory.listRooms(p);
    await app.services.inventory.setRoomStatus(p, { roomId: room!.id, status: "DIRTY" });
    const period = await app.services.inventory.createOutOfOrderPeriod(p, {
      roomId: room!.id,
      from: "2027-04-20",
      to: "2027-04-22",
      reason: "paint",
    });
    await app.services.inventory.deleteOutOfOrderPeriod(p, period.id);
    const reservationId = await bookOverRest("audit-folio-1");
    const folio = await app.services.folios.getFolio(p, { reservationId });
    await app.services.folios.postCharge(p, "test", {
      folioId: folio.id,
      code: "MINIBAR",
      description: "Water",
      amountMinor: 500n,
    });
    const paid = await app.services.folios.postPayment(p, "test", {
      folioId: folio.id,
      amountMinor: 500n,
      methodCode: "CASH",
    });
    await app.services.folios.reversePayment(p, "test", { paymentId: paid.id });

    const roomRows = (await restAudit(`entityType=room&entityId=${room!.id}`)).body.changes;
    expect(roomRows[0]).toMatchObject({ action: "status", actor: { kind: "system" } });
    expect(field(roomRows[0], "status")).toMatchObject({ before: "CLEAN", after: "DIRTY" });
    const periods = (await restAudit(`entityType=out_of_order&entityId=${period.id}`)).body.changes;
    expect(periods.map((c: Json) => c.action)).toEqual(["delete", "create"]);
    expect(field(periods[1], "from")?.after).toBe("2027-04-20");
    const postings = (await restAudit(`entityType=folio&entityId=${folio.id}`)).body.changes;
    expect(postings.map((c: Json) => c.action)).toEqual(["reversal", "payment", "charge"]);
    expect(field(postings[1], "amountMinor")?.after).toBe("500");
    expect(field(postings[0], "amountMinor")?.after).toBe("-500");
  });

  it("no guest personal data is stored in clear anywhere in the trail", async () => {
    const rows = await app.db.query<{ t: string }>("select changes::text as t from audit_changes");
    expect(rows.length).toBeGreaterThan(5);
    for (const { t } of rows) expect(t).not.toMatch(/Ayse|Yilmaz|Mehmet|Kaya|Channel Guest|ayse@example/);
  });

  it("a rolled-back change leaves no trail", async () => {
    const before = await app.db.query<{ n: number }>("select count(*)::int as n from audit_changes");
    const res = await hotel.createReservation(hotel.stay({ totalMinor: 1 }));
    expect(res.status).toBeGreaterThanOrEqual(400);
    const after = await app.db.query<{ n: number }>("select count(*)::int as n from audit_changes");
    expect(after[0]!.n).toBe(before[0]!.n);
  });
});

describe("reading", () => {
  it("refuses a caller without audit.read on every face (403)", async () => {
    expect((await restAudit("", frontDesk)).status).toBe(403);
    for (const client of [connect.audit, grpc.audit]) {
      const err = await client.listChanges({}, { headers: bearer(frontDesk) }).catch((e: unknown) => e);
      expect(ConnectError.from(err).code).toBe(Code.PermissionDenied);
    }
  });

  it("answers bad input with our error body naming the field on every face (400)", async () => {
    for (const [query, name] of [
      ["limit=500", "limit"],
      ["from=yesterday", "from"],
      ["entityType=visitor", "entityType"],
      ["entityId=x", "entityType"],
      ["cursor=nonsense", "cursor"],
    ] as const) {
      const { status, body } = await restAudit(query);
      expect(status, query).toBe(400);
      expect(body.error.code).toBe("invalid_argument");
      expect(body.error.details[0].field).toBe(name);
    }
    for (const client of [connect.audit, grpc.audit]) {
      const err = ConnectError.from(
        await client.listChanges({ limit: 201 }, { headers: managerHeaders() }).catch((e: unknown) => e),
      );
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toContain("limit");
    }
  });

  it("another property is 404 on Connect and gRPC; its changes never show", async () => {
    const other = await createTestProperty(app);
    for (const client of [connect.audit, grpc.audit]) {
      const err = await client
        .listChanges({ propertyCode: other.code }, { headers: managerHeaders() })
        .catch((e: unknown) => e);
      expect(ConnectError.from(err).code).toBe(Code.NotFound);
    }
    const otherManager = await createStaffSession(app, { propertyCode: other.code, role: "manager" });
    expect((await restAudit("", otherManager.accessToken)).body.changes).toEqual([]);
  });

  it("pages newest first by cursor without gaps or repeats; the time range filters", async () => {
    for (let i = 0; i < 3; i++) await bookOverRest(`audit-page-${i}`);
    const all = (await restAudit("limit=200")).body.changes as Json[];
    expect(all.length).toBeGreaterThan(7);
    const seen: string[] = [];
    let cursor = "";
    for (let pages = 0; pages < 100; pages++) {
      const { body } = await restAudit(`limit=3${cursor === "" ? "" : `&cursor=${cursor}`}`);
      expect(body.changes.length).toBeLessThanOrEqual(3);
      seen.push(...body.changes.map((c: Json) => c.id));
      if (!body.hasMore) break;
      cursor = body.nextCursor;
    }
    expect(seen).toEqual(all.map((c) => c.id));
    const times = all.map((c) => Date.parse(c.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await restAudit(`from=${future}`)).body.changes).toEqual([]);
    expect((await restAudit(`to=${future}&limit=200`)).body.changes).toHaveLength(all.length);
  });
});

describe("partitions", () => {
  it("creates the months ahead, drops the months past a year and moves stray rows out of the default partition", async () => {
    const month = (d: Date) => `audit_changes_y${d.getUTCFullYear()}m${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
    const now = new Date();
    expect(await auditPartitions(app.deps.transact)).toContain(month(now));
    const kept = (await restAudit("limit=200")).body.changes.length as number;
    expect(kept).toBeGreaterThan(0);

    // A clock moved 18 months on: the months ahead appear, every month that ended a year before goes.
    const later = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 18, 15));
    const run = await maintainAuditPartitions(app.deps.transact, later);
    expect(run.created).toEqual(
      [0, 1, 2, 3].map((i) => month(new Date(Date.UTC(later.getUTCFullYear(), later.getUTCMonth() + i, 1)))),
    );
    expect(run.dropped).toContain(month(now));
    expect(await auditPartitions(app.deps.transact)).not.toContain(month(now));
    expect((await restAudit("limit=200")).body.changes).toEqual([]);

    // A change with no month to go to lands in the default partition, never failing the write...
    const id = await bookOverRest("audit-stray-1");
    expect((await restAudit(`entityType=reservation&entityId=${id}`)).body.changes).toHaveLength(1);
    // ...and moves into its month when the job creates it.
    const back = await maintainAuditPartitions(app.deps.transact, now);
    expect(back.created).toContain(month(now));
    expect(back.moved).toBeGreaterThan(0);
    const stray = await app.db.query<{ n: number }>("select count(*)::int as n from audit_changes_default");
    expect(stray[0]!.n).toBe(0);
    expect((await restAudit(`entityType=reservation&entityId=${id}`)).body.changes[0].requestId).toBe("audit-stray-1");
  });
});
