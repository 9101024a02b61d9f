import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { randomBytes } from "node:crypto";
import { AuditService } from "../../gen/hotelops/audit/v1/audit_pb.js";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { GuestService } from "../../gen/hotelops/guest/v1/guest_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { createGuestService } from "../../src/modules/guests/guests.service.ts";
import { createGuestVault } from "../../src/modules/guests/vault.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { doubleRoomsAtBar, roomNumbers } from "../helpers/hotel-fixtures.ts";
import { restCaller } from "../helpers/rest.ts";

// KVKK rights of a guest (GuestService ExportGuest / EraseGuest) over REST, Connect and gRPC: the export holds the
// profile in full, the stays, their folios and invoices; the erasure anonymises the profile, keeps what the tax and
// commercial laws require and says so, is idempotent, is refused while the guest is in house; both are audited,
// need their permissions and answer 404 for another group's guest.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;
const key = randomBytes(32);
let manager: string, desk: string, managerB: string;
let roomTypeId: string, ratePlanId: string;
const roomIds: string[] = [];
let connect: Client<typeof GuestService>, grpc: Client<typeof GuestService>;
let reservations: Client<typeof ReservationService>, folios: Client<typeof FolioService>;
let audit: Client<typeof AuditService>;

const rest = restCaller(() => app.baseUrl);

let seq = 0;
async function guestOnStay(): Promise<{ guestId: string; reservationId: string; lineId: string; number: string }> {
  seq++;
  const number = `K${randomBytes(3).toString("hex").toUpperCase()}${seq}`;
  const g = await rest("POST", "/api/panel/v1/guests", desk, {
    givenName: "Kemal",
    familyName: "Sahin",
    documentType: "PASSPORT",
    documentNumber: number,
    email: "kemal.sahin@example.com",
    birthDate: "1961-07-23",
  });
  const r = await rest("POST", "/api/mobile/v1/reservations", manager, {
    holderName: "Ayse Yilmaz",
    arrivalDate: "2027-03-01",
    departureDate: "2027-03-03",
    roomTypeId,
    ratePlanId,
    adults: 1,
    totalMinor: 50000,
    currency: "TRY",
  });
  if (r.status !== 201) throw new Error(`reservation: ${r.status} ${JSON.stringify(r.body)}`);
  const lineId = r.body.rooms[0].id as string;
  const linked = await rest("POST", `/api/panel/v1/reservations/${r.body.id}/rooms/${lineId}/guests`, desk, {
    guestId: g.body.guest.id,
  });
  expect(linked.status).toBe(200);
  return { guestId: g.body.guest.id as string, reservationId: r.body.id as string, lineId, number };
}

async function actions(guestId: string): Promise<string[]> {
  const t = await audit.listChanges({ entityType: "guest", entityId: guestId }, { headers: bearer(manager) });
  return t.changes.map((c) => c.action);
}

beforeAll(async () => {
  app = await startTestApp({ env: { GUEST_DATA_KEY: key.toString("hex") } });
  const group = `KV-${randomBytes(3).toString("hex")}`;
  const property = await createTestProperty(app, { groupCode: group, businessDate: "2027-03-01" });
  const other = await createTestProperty(app, { groupCode: `${group}-OTHER` });
  const fixture = await doubleRoomsAtBar(app.services.inventory, property.id, roomNumbers(101, 110));
  roomIds.push(...fixture.roomIds);
  [roomTypeId, ratePlanId] = [fixture.roomTypeId, fixture.ratePlanId];
  manager = (await createStaffSession(app, { propertyCode: property.code, role: "manager" })).accessToken;
  desk = (await createStaffSession(app, { propertyCode: property.code, role: "front_desk" })).accessToken;
  managerB = (await createStaffSession(app, { propertyCode: other.code, role: "manager" })).accessToken;
  const t = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
  connect = createClient(GuestService, t);
  reservations = createClient(ReservationService, t);
  folios = createClient(FolioService, t);
  audit = createClient(AuditService, t);
  grpc = createClient(GuestService, createGrpcTransport({ baseUrl: app.baseUrl }));
}, 60_000);
afterAll(async () => {
  await app?.close();
});

describe("KVKK export", () => {
  it("exports the profile in full with its stays, folios and invoices, audited; needs guests.read_sensitive", async () => {
    const s = await guestOnStay();
    const folioId = (await folios.getFolio({ reservationId: s.reservationId }, { headers: bearer(manager) })).folio!.id;
    await folios.postCharge(
      { folioId, code: "MINIBAR", description: "Minibar", amountMinor: 2000n },
      { headers: bearer(manager) },
    );
    const invoice = (await folios.createInvoiceDraft({ folioId }, { headers: bearer(manager) })).invoice!;
    const r = await rest("POST", `/api/panel/v1/guests/${s.guestId}/export`, manager, {});
    expect(r.status).toBe(200);
    const x = r.body.export;
    expect(x.guest).toMatchObject({
      id: s.guestId,
      documentNumber: s.number,
      email: "kemal.sahin@example.com",
      birthDate: "1961-07-23",
      masked: false,
    });
    expect(x.stays).toMatchObject([{ reservationId: s.reservationId, reservationRoomId: s.lineId }]);
    expect(x.folios).toMatchObject([{ id: folioId, reservationId: s.reservationId, balanceMinor: "2000" }]);
    expect(x.invoices).toMatchObject([{ id: invoice.id, folioId, status: "DRAFT" }]);
    expect(typeof x.exportedAt).toBe("string");
    expect(await actions(s.guestId)).toEqual(["export", "link_stay", "create"]);
    const denied = await rest("POST", `/api/panel/v1/guests/${s.guestId}/export`, desk, {});
    expect(denied.status).toBe(403);
  });
});

describe("KVKK erasure", () => {
  it("is refused in house, then anonymises the profile, keeps what the law requires and says why; idempotent", async () => {
    const s = await guestOnStay();
    const h = { headers: bearer(manager) };
    await reservations.checkInRoomLine(
      { reservationId: s.reservationId, reservationRoomId: s.lineId, roomId: roomIds[seq]! },
      h,
    );
    const inHouse = await rest("POST", `/api/panel/v1/guests/${s.guestId}/erase`, manager, {});
    expect(inHouse.status).toBe(409);
    expect(inHouse.body.error.code).toBe("conflict");
    await reservations.checkOutRoomLine({ reservationId: s.reservationId, reservationRoomId: s.lineId }, h);

    const erased = await rest("POST", `/api/panel/v1/guests/${s.guestId}/erase`, manager, {});
    expect(erased.status).toBe(200);
    expect(erased.body.alreadyErased).toBe(false);
    expect(erased.body.guest).toMatchObject({
      id: s.guestId,
      givenName: "Erased",
      familyName: "Guest",
      documentNumber: "",
      email: "",
      birthDate: "",
    });
    expect(erased.body.guest.erasedAt).toEqual(expect.any(String));
    expect(erased.body.kept.map((k: Json) => k.data)).toEqual([
      "invoices",
      "reservations and folios",
      "stays",
      "guest reports",
      "audit trail",
    ]);
    expect(erased.body.kept[0].reason).toMatch(/10 years/);
    expect(erased.body.kept[3].reason).toMatch(/GUEST_REPORT_RETENTION_YEARS/);
    // the check-in and check-out reports to the authority stay, within their period
    const reports = await app.deps.db.pool.query(
      `select movement from guest_reports where guest_id = $1 order by created_at`,
      [s.guestId],
    );
    expect(reports.rows).toEqual([{ movement: "check_in" }, { movement: "check_out" }]);
    // nothing personal is left in the row, and the old document number finds nothing
    const [row] = (await app.deps.db.pool.query(`select * from guests where id = $1`, [s.guestId])).rows as Json[];
    expect(row!.document_hash).toBeNull();
    expect(JSON.stringify(row)).not.toMatch(/Kemal|Sahin|kemal\.sahin|1961-07-23/);
    const search = await rest("GET", `/api/panel/v1/guests?documentNumber=${s.number}`, manager);
    expect(search.body.guests).toEqual([]);
    const full = await rest("GET", `/api/panel/v1/guests/${s.guestId}`, manager);
    expect(full.body.guest).toMatchObject({ givenName: "Erased", email: "", phone: "" });
    // the stay link stays, without personal data
    const stays = await rest("GET", `/api/panel/v1/guests/${s.guestId}/stays`, manager);
    expect(stays.body.stays.map((x: Json) => x.reservationRoomId)).toEqual([s.lineId]);

    const again = await rest("POST", `/api/panel/v1/guests/${s.guestId}/erase`, manager, {});
    expect(again.status).toBe(200);
    expect(again.body.alreadyErased).toBe(true);
    expect((await actions(s.guestId)).filter((a) => a === "erase")).toHaveLength(1);
    // an erased guest is not changed or put on a line any more
    expect((await rest("PATCH", `/api/panel/v1/guests/${s.guestId}`, manager, { givenName: "Kemal" })).status).toBe(
      409,
    );
    const other = await guestOnStay();
    const relink = await rest(
      "POST",
      `/api/panel/v1/reservations/${other.reservationId}/rooms/${other.lineId}/guests`,
      desk,
      { guestId: s.guestId },
    );
    expect(relink.status).toBe(409);
  });

  it("needs guests.erase (403 for the front desk) and answers 404 for another group's guest", async () => {
    const s = await guestOnStay();
    expect((await rest("POST", `/api/panel/v1/guests/${s.guestId}/erase`, desk, {})).status).toBe(403);
    expect((await rest("POST", `/api/panel/v1/guests/${s.guestId}/erase`, managerB, {})).status).toBe(404);
    expect((await rest("POST", `/api/panel/v1/guests/${s.guestId}/export`, managerB, {})).status).toBe(404);
    expect((await rest("GET", `/api/panel/v1/guests/${s.guestId}`, manager)).body.guest.familyName).toBe("Sahin");
  });

  for (const face of ["connect", "grpc"] as const)
    it(`${face}: exports and erases; a missing id is INVALID_ARGUMENT, another group's guest NOT_FOUND`, async () => {
      const client = face === "connect" ? connect : grpc;
      const s = await guestOnStay();
      const h = { headers: bearer(manager) };
      const x = await client.exportGuest({ guestId: s.guestId }, h);
      expect((x.export as Json).guest.documentNumber).toBe(s.number);
      const erased = await client.eraseGuest({ guestId: s.guestId }, h);
      expect(erased.guest).toMatchObject({ givenName: "Erased", documentNumber: "" });
      expect(erased.guest!.erasedAt).toBeDefined();
      expect(erased.kept.length).toBe(5);
      expect((await client.eraseGuest({ guestId: s.guestId }, h)).alreadyErased).toBe(true);
      expect(await actions(s.guestId)).toEqual(["erase", "export", "link_stay", "create"]);
      for (const call of [() => client.eraseGuest({ guestId: "" }, h), () => client.exportGuest({ guestId: "" }, h)]) {
        const err = await call().catch((e: unknown) => e);
        expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      }
      const foreign = await client
        .exportGuest({ guestId: s.guestId }, { headers: bearer(managerB) })
        .catch((e: unknown) => e);
      expect((foreign as ConnectError).code).toBe(Code.NotFound);
    });
});

describe("the retention job", () => {
  it("anonymises a profile once its last stay is more than the retention years of full calendar years past", async () => {
    const s = await guestOnStay(); // the stay departs on 2027-03-03
    const at = (iso: string) =>
      createGuestService({
        transact: app.deps.transact,
        pool: app.deps.db.pool,
        clock: { now: () => new Date(iso) },
        vault: createGuestVault(key),
      });
    await at("2037-12-31T23:00:00Z").erasePastRetention(10);
    const kept = await rest("GET", `/api/panel/v1/guests/${s.guestId}`, manager);
    expect(kept.body.guest).toMatchObject({ familyName: "Sahin", documentNumber: s.number });
    // with a shorter period the same stay is past it
    expect(await at("2037-12-31T23:00:00Z").erasePastRetention(9)).toBeGreaterThan(0);
    const erased = await rest("GET", `/api/panel/v1/guests/${s.guestId}`, manager);
    expect(erased.body.guest).toMatchObject({ givenName: "Erased", familyName: "Guest", documentNumber: "" });
    const trail = await audit.listChanges({ entityType: "guest", entityId: s.guestId }, { headers: bearer(manager) });
    const erase = trail.changes.find((c) => c.action === "erase")!;
    expect(erase.changes.find((f) => f.field === "reason")?.after).toMatchObject({ kind: { value: "retention" } });
    // already erased: a later run leaves it alone
    await at("2040-01-02T00:00:00Z").erasePastRetention(10);
    expect((await actions(s.guestId)).filter((a) => a === "erase")).toHaveLength(1);
    // the job runs daily
    const { rows } = await app.deps.db.pool.query(`select cron from pgboss.schedule where name = 'guests.retention'`);
    expect(rows).toEqual([{ cron: "41 3 * * *" }]);
  });
});
