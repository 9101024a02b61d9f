import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { randomBytes } from "node:crypto";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { AuditService } from "../../gen/hotelops/audit/v1/audit_pb.js";
import { GuestService } from "../../gen/hotelops/guest/v1/guest_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { doubleRoomsAtBar, roomNumbers } from "../helpers/hotel-fixtures.ts";
import { restCaller } from "../helpers/rest.ts";

// Guests on room lines (GuestService AddRoomLineGuest / RemoveRoomLineGuest / ListGuestStays / MergeGuests) over REST,
// Connect and gRPC: the line's occupancy, a cancelled stay, the audit trail, the guests on reservation reads (masked
// without guests.read_sensitive), a guest's stays across the group paged by cursor, merging duplicates, and another
// group's or property's resources answered 404.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;
interface Hotel {
  code: string;
  manager: string;
  frontDesk: string;
  viewer: string;
  reserve: (adults: number, arrival?: string) => Promise<{ id: string; lineId: string }>;
}
let a: Hotel, a2: Hotel, b: Hotel;
let connect: Client<typeof GuestService>, grpc: Client<typeof GuestService>;
let reservationsConnect: Client<typeof ReservationService>;
let audit: Client<typeof AuditService>;

const rest = restCaller(() => app.baseUrl);

async function hotel(groupCode: string): Promise<Hotel> {
  const property = await createTestProperty(app, { groupCode, businessDate: "2027-03-01" });
  const { roomTypeId, ratePlanId } = await doubleRoomsAtBar(
    app.services.inventory,
    property.id,
    roomNumbers(101, 130),
    3,
  );
  const session = async (role: string) =>
    (await createStaffSession(app, { propertyCode: property.code, role })).accessToken;
  const manager = await session("manager");
  return {
    code: property.code,
    manager,
    frontDesk: await session("front_desk"),
    viewer: await session("viewer"),
    async reserve(adults, arrival = "2027-03-10") {
      const r = await rest("POST", "/api/mobile/v1/reservations", manager, {
        holderName: "Ayse Yilmaz",
        arrivalDate: arrival,
        departureDate: "2027-03-12",
        roomTypeId,
        ratePlanId,
        adults,
        totalMinor: arrival === "2027-03-10" ? 50000 : 25000 * (12 - Number(arrival.slice(8))),
        currency: "TRY",
      });
      if (r.status !== 201) throw new Error(`reservation: ${r.status} ${JSON.stringify(r.body)}`);
      return { id: r.body.id as string, lineId: r.body.rooms[0].id as string };
    },
  };
}

let seq = 0;
/** A guest of `h`'s group (a fresh passport number each). */
async function guest(h: Hotel, over: Json = {}): Promise<string> {
  seq++;
  const r = await rest("POST", "/api/panel/v1/guests", h.frontDesk, {
    givenName: "Kemal",
    familyName: "Sahin",
    nationality: "TR",
    documentType: "PASSPORT",
    documentNumber: `S${randomBytes(4).toString("hex").toUpperCase()}${seq}`,
    ...over,
  });
  if (r.status !== 201) throw new Error(`guest: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.guest.id as string;
}

const linePath = (r: { id: string; lineId: string }) => `/api/panel/v1/reservations/${r.id}/rooms/${r.lineId}/guests`;

async function trail(guestId: string, token = a.manager): Promise<string[]> {
  const t = await audit.listChanges({ entityType: "guest", entityId: guestId }, { headers: bearer(token) });
  return t.changes.map((c) => c.action);
}

function fieldOf(e: unknown): string | undefined {
  return (e as ConnectError).findDetails(ErrorInfoSchema)[0]?.details[0]?.field;
}

beforeAll(async () => {
  app = await startTestApp();
  const group = `GS-${randomBytes(3).toString("hex")}`;
  a = await hotel(group);
  a2 = await hotel(group);
  b = await hotel(`${group}-OTHER`);
  const t = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
  connect = createClient(GuestService, t);
  reservationsConnect = createClient(ReservationService, t);
  audit = createClient(AuditService, t);
  grpc = createClient(GuestService, createGrpcTransport({ baseUrl: app.baseUrl }));
}, 60_000);
afterAll(async () => {
  await app?.close();
});

describe("guests on room lines over REST", () => {
  it("links guests to a line up to its occupancy, once each, in the audit trail; unlinks them", async () => {
    const stay = await a.reserve(2);
    const [g1, g2, g3] = [await guest(a), await guest(a), await guest(a)];
    const first = await rest("POST", linePath(stay), a.frontDesk, { guestId: g1 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ added: true, guests: [{ id: g1, masked: true, familyName: "Sahin" }] });
    expect(first.body.guests[0].documentNumber).toMatch(/^S.\*+..$/);
    const again = await rest("POST", linePath(stay), a.frontDesk, { guestId: g1 });
    expect(again.body).toMatchObject({ added: false, guests: [{ id: g1 }] });
    expect(
      (await rest("POST", linePath(stay), a.frontDesk, { guestId: g2 })).body.guests.map((g: Json) => g.id),
    ).toEqual([g1, g2]);
    // two adults: a third guest is refused naming the field
    const full = await rest("POST", linePath(stay), a.frontDesk, { guestId: g3 });
    expect(full.status).toBe(422);
    expect(full.body.error).toMatchObject({ code: "validation_failed", details: [{ field: "guestId" }] });
    expect(await trail(g1)).toEqual(["link_stay", "create"]);

    const removed = await rest("DELETE", `${linePath(stay)}/${g1}`, a.frontDesk);
    expect(removed.status).toBe(200);
    expect(removed.body.guests.map((g: Json) => g.id)).toEqual([g2]);
    expect((await rest("DELETE", `${linePath(stay)}/${g1}`, a.frontDesk)).status).toBe(404);
    expect(await trail(g1)).toEqual(["unlink_stay", "link_stay", "create"]);
    // the mobile binding is the same RPC
    const mobile = await rest(
      "POST",
      `/api/mobile/v1/reservations/${stay.id}/rooms/${stay.lineId}/guests`,
      a.frontDesk,
      { guestId: g3 },
    );
    expect(mobile.body.guests.map((g: Json) => g.id)).toEqual([g2, g3]);
  });

  it("refuses guests on a cancelled reservation (409)", async () => {
    const stay = await a.reserve(1);
    await reservationsConnect.cancelReservation({ reservationId: stay.id }, { headers: bearer(a.manager) });
    const r = await rest("POST", linePath(stay), a.frontDesk, { guestId: await guest(a) });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("conflict");
  });

  it("shows the line's guests on reservation reads: masked, in full with guests.read_sensitive (recorded)", async () => {
    const stay = await a.reserve(2);
    const g = await guest(a, { documentNumber: "U98765439", birthDate: "1961-07-23" });
    await rest("POST", linePath(stay), a.frontDesk, { guestId: g });
    const masked = await reservationsConnect.getReservation(
      { reservationId: stay.id },
      { headers: bearer(a.frontDesk) },
    );
    expect(masked.reservation!.rooms[0]!.guests).toMatchObject([
      { id: g, masked: true, documentNumber: "U9*****39", birthDate: "****-**-**" },
    ]);
    expect(await trail(g)).toEqual(["link_stay", "create"]);
    const mobile = await rest("GET", `/api/mobile/v1/reservations/${stay.id}`, a.frontDesk);
    expect(mobile.body.reservation.rooms[0].guests).toMatchObject([{ id: g, masked: true }]);
    const full = await reservationsConnect.getReservation({ reservationId: stay.id }, { headers: bearer(a.manager) });
    expect(full.reservation!.rooms[0]!.guests).toMatchObject([
      { id: g, masked: false, documentNumber: "U98765439", birthDate: "1961-07-23" },
    ]);
    expect(await trail(g)).toEqual(["read_sensitive", "link_stay", "create"]);
  });

  it("lists a guest's stays across the group's properties, latest link first, paged without gaps or repeats", async () => {
    const g = await guest(a);
    const stays = [await a.reserve(1), await a2.reserve(1, "2027-03-11"), await a.reserve(1, "2027-03-11")];
    for (const [i, s] of stays.entries()) {
      const h = i === 1 ? a2 : a;
      expect((await rest("POST", linePath(s), h.frontDesk, { guestId: g })).status).toBe(200);
    }
    const seen: Json[] = [];
    let cursor = "";
    do {
      const page = await rest("GET", `/api/panel/v1/guests/${g}/stays?limit=2&cursor=${cursor}`, a.viewer);
      expect(page.status).toBe(200);
      expect(page.body.stays.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.stays);
      cursor = page.body.nextCursor ?? "";
    } while (cursor !== "");
    expect(seen.map((s) => s.reservationRoomId)).toEqual(stays.map((s) => s.lineId).reverse());
    expect(seen.map((s) => s.propertyCode)).toEqual([a.code, a2.code, a.code]);
    expect(seen[2]).toMatchObject({ reservationId: stays[0]!.id, status: "GUARANTEED", arrivalDate: "2027-03-10" });
    expect(seen[2]!.reservationCode).toMatch(/^R/);
    const bad = await rest("GET", `/api/panel/v1/guests/${g}/stays?cursor=nope`, a.viewer);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: "cursor", reason: "not a cursor of this list" }]);
    const big = await rest("GET", `/api/panel/v1/guests/${g}/stays?limit=101`, a.viewer);
    expect(big.status).toBe(400);
    expect(big.body.error.details[0].field).toBe("limit");
  });

  it("needs frontdesk.check_in to link or unlink (403 for a viewer) and guests.merge to merge (403 for the front desk)", async () => {
    const stay = await a.reserve(1);
    const g = await guest(a);
    expect((await rest("POST", linePath(stay), a.viewer, { guestId: g })).status).toBe(403);
    expect((await rest("DELETE", `${linePath(stay)}/${g}`, a.viewer)).status).toBe(403);
    const merge = await rest("POST", `/api/panel/v1/guests/${g}/merge`, a.frontDesk, {
      duplicateGuestIds: [await guest(a)],
    });
    expect(merge.status).toBe(403);
    expect(merge.body.error.code).toBe("forbidden");
  });

  it("answers bad input with our error body (400), never a 500", async () => {
    const stay = await a.reserve(1);
    const noGuest = await rest("POST", linePath(stay), a.frontDesk, {});
    expect(noGuest.status).toBe(400);
    expect(noGuest.body.error.code).toBe("invalid_argument");
    const notUuid = await rest("POST", `/api/panel/v1/reservations/${stay.id}/rooms/nope/guests`, a.frontDesk, {
      guestId: await guest(a),
    });
    expect([400, 404]).toContain(notUuid.status);
    expect(notUuid.body.error.code).toMatch(/invalid_argument|not_found/);
    const g = await guest(a);
    for (const body of [
      { duplicateGuestIds: [] },
      { duplicateGuestIds: [g] },
      { duplicateGuestIds: Array.from({ length: 11 }, () => newId()) },
    ]) {
      const r = await rest("POST", `/api/panel/v1/guests/${g}/merge`, a.manager, body);
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("duplicateGuestIds");
    }
  });
});

describe("merging duplicates", () => {
  it("moves the stays, fills the kept guest's empty fields, deletes the duplicates, records it (REST)", async () => {
    const kept = await guest(a, { email: "" });
    const dup = await guest(a, { email: "kemal.sahin@example.com", phone: "+905321234567", language: "tr" });
    const dup2 = await guest(a);
    const [s1, s2, s3] = [await a.reserve(2), await a.reserve(2), await a2.reserve(2, "2027-03-11")];
    await rest("POST", linePath(s1), a.frontDesk, { guestId: dup });
    await rest("POST", linePath(s2), a.frontDesk, { guestId: dup });
    await rest("POST", linePath(s2), a.frontDesk, { guestId: kept });
    await rest("POST", linePath(s3), a2.frontDesk, { guestId: dup2 });
    const r = await rest("POST", `/api/panel/v1/guests/${kept}/merge`, a.manager, { duplicateGuestIds: [dup, dup2] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ guest: { id: kept, email: "k***@example.com", language: "tr" }, staysMoved: 2 });
    const full = await rest("GET", `/api/panel/v1/guests/${kept}`, a.manager);
    expect(full.body.guest).toMatchObject({ email: "kemal.sahin@example.com", phone: "+905321234567" });
    const stays = await rest("GET", `/api/panel/v1/guests/${kept}/stays`, a.manager);
    expect(stays.body.stays.map((s: Json) => s.reservationRoomId).sort()).toEqual(
      [s1.lineId, s2.lineId, s3.lineId].sort(),
    );
    const line2 = await reservationsConnect.getReservation({ reservationId: s2.id }, { headers: bearer(a.frontDesk) });
    expect(line2.reservation!.rooms[0]!.guests.map((g) => g.id)).toEqual([kept]);
    expect((await rest("GET", `/api/panel/v1/guests/${dup}`, a.manager)).status).toBe(404);
    expect((await trail(kept)).slice(0, 2)).toEqual(["read_sensitive", "merge"]);
    expect(await trail(dup)).toEqual(["merged_into", "link_stay", "link_stay", "create"]);
  });

  for (const face of ["connect", "grpc"] as const)
    it(`${face}: links, lists, unlinks and merges; bad input is INVALID_ARGUMENT naming the field`, async () => {
      const client = face === "connect" ? connect : grpc;
      const stay = await a.reserve(2);
      const [kept, dup] = [await guest(a), await guest(a)];
      const h = { headers: bearer(a.frontDesk) };
      const added = await client.addRoomLineGuest(
        { reservationId: stay.id, reservationRoomId: stay.lineId, guestId: dup },
        h,
      );
      expect(added).toMatchObject({ added: true, guests: [{ id: dup, masked: true }] });
      const stays = await client.listGuestStays({ guestId: dup }, h);
      expect(stays.stays.map((s) => s.reservationRoomId)).toEqual([stay.lineId]);
      expect(stays.stays[0]!.linkedAt).toBeDefined();
      const merged = await client.mergeGuests(
        { guestId: kept, duplicateGuestIds: [dup] },
        { headers: bearer(a.manager) },
      );
      expect(merged.staysMoved).toBe(1);
      const removed = await client.removeRoomLineGuest(
        { reservationId: stay.id, reservationRoomId: stay.lineId, guestId: kept },
        h,
      );
      expect(removed.guests).toEqual([]);
      expect(await trail(kept)).toEqual(["unlink_stay", "merge", "create"]);
      const bad = await client
        .mergeGuests({ guestId: kept, duplicateGuestIds: [kept] }, { headers: bearer(a.manager) })
        .catch((e: unknown) => e);
      expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
      expect(fieldOf(bad)).toBe("duplicateGuestIds");
      const page = await client.listGuestStays({ guestId: kept, limit: 500 }, h).catch((e: unknown) => e);
      expect((page as ConnectError).code).toBe(Code.InvalidArgument);
      expect(fieldOf(page)).toBe("limit");
      const forbidden = await client
        .mergeGuests({ guestId: kept, duplicateGuestIds: [dup] }, h)
        .catch((e: unknown) => e);
      expect((forbidden as ConnectError).code).toBe(Code.PermissionDenied);
    });
});

describe("isolation", () => {
  it("another group's guest, another property's line and another group's caller are 404 on every face", async () => {
    const stayA = await a.reserve(2);
    const stayB = await b.reserve(2);
    const gA = await guest(a);
    const gB = await guest(b);
    // B's guest on A's line, A's guest on B's line (from either side), A's line from A2 (same group, other property)
    expect((await rest("POST", linePath(stayA), a.frontDesk, { guestId: gB })).status).toBe(404);
    expect((await rest("POST", linePath(stayB), b.frontDesk, { guestId: gA })).status).toBe(404);
    expect((await rest("POST", linePath(stayB), a.frontDesk, { guestId: gA })).status).toBe(404);
    expect((await rest("POST", linePath(stayA), a2.frontDesk, { guestId: gA })).status).toBe(404);
    // A's line under B's reservation id
    const mixed = { id: stayB.id, lineId: stayA.lineId };
    expect((await rest("POST", linePath(mixed), a.frontDesk, { guestId: gA })).status).toBe(404);
    expect((await rest("GET", `/api/panel/v1/guests/${gA}/stays`, b.manager)).status).toBe(404);
    expect(
      (await rest("POST", `/api/panel/v1/guests/${gA}/merge`, b.manager, { duplicateGuestIds: [gB] })).status,
    ).toBe(404);
    expect(
      (await rest("POST", `/api/panel/v1/guests/${gB}/merge`, b.manager, { duplicateGuestIds: [gA] })).status,
    ).toBe(404);
    for (const client of [connect, grpc]) {
      const calls: (() => Promise<unknown>)[] = [
        () =>
          client.addRoomLineGuest(
            { reservationId: stayA.id, reservationRoomId: stayA.lineId, guestId: gB },
            { headers: bearer(a.frontDesk) },
          ),
        () =>
          client.addRoomLineGuest(
            { propertyCode: b.code, reservationId: stayB.id, reservationRoomId: stayB.lineId, guestId: gA },
            { headers: bearer(a.frontDesk) },
          ),
        () =>
          client.removeRoomLineGuest(
            { reservationId: stayA.id, reservationRoomId: stayA.lineId, guestId: gA },
            { headers: bearer(b.frontDesk) },
          ),
        () => client.listGuestStays({ guestId: gA }, { headers: bearer(b.manager) }),
        () => client.mergeGuests({ guestId: gB, duplicateGuestIds: [gA] }, { headers: bearer(b.manager) }),
      ];
      for (const call of calls) {
        const err = await call().catch((e: unknown) => e);
        expect((err as ConnectError).code).toBe(Code.NotFound);
      }
    }
    // nothing moved: A's guest still exists, B's reservation shows no guest
    expect((await rest("GET", `/api/panel/v1/guests/${gA}`, a.frontDesk)).status).toBe(200);
    const readB = await reservationsConnect.getReservation({ reservationId: stayB.id }, { headers: bearer(b.manager) });
    expect(readB.reservation!.rooms[0]!.guests).toEqual([]);
  });
});
