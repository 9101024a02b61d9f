import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { FolioService, InvoiceStatus } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { ReservationService, ReservationStatus } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import {
  seedInvoiceIssuer,
  seedReservation,
  seedRoomTypeAndRatePlan,
  type SeededProperty,
} from "../helpers/hotel-fixtures.ts";
import { failure } from "../invoices/fixtures.ts";

// A stay's billing from check-in to invoices, on gRPC and Connect: check in, a company folio with a routing rule,
// charges, the guest pays the extras, check-out settles what is open to the company's city-ledger account (refused
// beyond its credit limit, nothing changed), then an invoice per folio.
let app: TestApp;
let hotel: SeededProperty;
let otherAccountId: string;
type Faces = { folios: Client<typeof FolioService>; reservations: Client<typeof ReservationService> };
const faces: Record<string, Faces> = {};
let checkOutOnly: Faces;
let rooms = 100;

function clientsOf(token: string): Record<"gRPC" | "Connect", Faces> {
  const interceptors = [
    (next: (req: { header: Headers }) => Promise<unknown>) => (req: { header: Headers }) => {
      req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    },
  ] as never;
  const grpc = createGrpcTransport({ baseUrl: app.baseUrl, interceptors });
  const connect = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors });
  return {
    gRPC: { folios: createClient(FolioService, grpc), reservations: createClient(ReservationService, grpc) },
    Connect: { folios: createClient(FolioService, connect), reservations: createClient(ReservationService, connect) },
  };
}

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: "2026-06-01" });
  const q = await createTestProperty(app, { businessDate: "2026-06-01" });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  await seedInvoiceIssuer(app.db.pool, hotel.id);
  Object.assign(
    faces,
    clientsOf((await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken),
  );
  // a role that checks guests out but may not post to folios (folio.post): roles are data
  await app.db.pool.query(
    `insert into roles (code, name, permissions) values ('checkout_only', 'Check-out only', array['reservations.view','frontdesk.check_out'])
     on conflict (code) do nothing`,
  );
  checkOutOnly = clientsOf(
    (await createStaffSession(app, { propertyCode: p.code, role: "checkout_only" })).accessToken,
  ).gRPC;
  otherAccountId = (
    await app.services.cityLedger.createAccount(q.id, {
      code: "OTHER",
      name: "Other hotel's company",
      kind: "COMPANY",
      creditLimitMinor: 1_000_000_00n,
    })
  ).id;
});
afterAll(async () => {
  await app?.close();
});

/** A guaranteed stay arriving on the business date, checked in to a room of its own. */
async function checkedIn(c: Faces): Promise<{ reservationId: string; lineId: string }> {
  const room = await app.services.inventory.createRoom(hotel.id, {
    number: String(++rooms),
    roomTypeId: hotel.roomTypeId,
  });
  const r = await seedReservation(app.db.pool, hotel, {
    arrival: "2026-06-01",
    departure: "2026-06-03",
    nightly: [1000_00n, 1000_00n],
  });
  await c.reservations.checkInRoomLine({ reservationId: r.id, reservationRoomId: r.roomLineId, roomId: room.id });
  return { reservationId: r.id, lineId: r.roomLineId };
}

const company = {
  kind: "COMPANY",
  vkn: "9876543217",
  title: "Güneş Seyahat Ltd. Şti.",
  taxOffice: "Çankaya",
  address: { street: "Atatürk Bulvarı 5", district: "Çankaya", city: "Ankara", postalZone: "06690", countryCode: "TR" },
};

describe("check-out settles to the city ledger", () => {
  it.each(["gRPC", "Connect"] as const)(
    "%s: check in, route, post, check out to the company's account, invoice each folio",
    async (face) => {
      const c = faces[face]!;
      const { reservationId, lineId } = await checkedIn(c);
      const guestFolio = (await c.folios.getFolio({ reservationId })).folio!;
      const companyFolio = (await c.folios.createFolio({ reservationId, name: "Company" })).folio!;
      await c.folios.setFolioRoutingRule({ reservationId, chargeCode: "MEETING", folioId: companyFolio.id });
      const meeting = (
        await c.folios.postCharge({
          folioId: guestFolio.id,
          code: "MEETING",
          description: "Toplantı",
          amountMinor: 600_00n,
        })
      ).charge!;
      expect(meeting.folioId).toBe(companyFolio.id);
      await c.folios.postCharge({
        folioId: guestFolio.id,
        code: "MINIBAR",
        description: "Minibar",
        amountMinor: 40_00n,
      });
      await c.folios.postCharge({
        folioId: guestFolio.id,
        code: "LAUNDRY",
        description: "Çamaşır",
        amountMinor: 25_00n,
      });
      // the guest pays the minibar; the laundry is moved to the company
      await c.folios.postPayment({ folioId: guestFolio.id, amountMinor: 40_00n, methodCode: "CASH" });
      const laundry = (await c.folios.getFolio({ folioId: guestFolio.id })).folio!.charges.find(
        (x) => x.code === "LAUNDRY",
      )!;
      await c.folios.transferCharge({ chargeId: laundry.id, toFolioId: companyFolio.id });

      // a limit below what is open: the check-out is refused and nothing changes
      const tight = (
        await c.folios.createLedgerAccount({
          code: `TIGHT-${face}`,
          name: "Acme",
          kind: "COMPANY",
          creditLimitMinor: 500_00n,
        })
      ).account!;
      const refused = await failure(
        c.reservations.checkOutRoomLine({ reservationId, reservationRoomId: lineId, settleToAccountId: tight.id }),
      );
      expect([refused.grpc, refused.code, refused.fields]).toEqual([
        Code.InvalidArgument,
        "validation_failed",
        ["creditLimitMinor"],
      ]);
      expect((await c.reservations.getReservation({ reservationId })).reservation!.status).toBe(
        ReservationStatus.IN_HOUSE,
      );
      expect((await c.folios.getFolio({ folioId: companyFolio.id })).folio!.balanceMinor).toBe(625_00n);

      const acme = (
        await c.folios.createLedgerAccount({
          code: `ACME-${face}`,
          name: "Acme",
          kind: "COMPANY",
          creditLimitMinor: 5000_00n,
        })
      ).account!;
      const out = await c.reservations.checkOutRoomLine({
        reservationId,
        reservationRoomId: lineId,
        settleToAccountId: acme.id,
      });
      expect(out.reservation!.status).toBe(ReservationStatus.CHECKED_OUT);
      const folios = (await c.folios.listFolios({ reservationId })).folios;
      expect(folios.map((f) => [f.window, f.balanceMinor])).toEqual([
        [1, 0n],
        [2, 0n],
      ]);
      const settlement = folios[1]!.payments.find((p) => p.methodCode === "CITY_LEDGER")!;
      expect(settlement.amountMinor).toBe(625_00n);
      const statement = await c.folios.getAccountStatement({ accountId: acme.id });
      expect(statement.account!.balanceMinor).toBe(625_00n);
      expect(statement.items.map((i) => [i.kind, i.folioId, i.amountMinor])).toEqual([
        ["FOLIO", companyFolio.id, 625_00n],
      ]);
      const trail = await app.db.pool.query<{ action: string }>(
        `select action from audit_changes where property_id = $1 and entity_type = 'ledger_account' and entity_id = $2
         order by at, id`,
        [hotel.id, acme.id],
      );
      expect(trail.rows.map((r) => r.action)).toEqual(["create", "debit"]);

      // an invoice per folio: the company's with its buyer, the guest's to an unknown consumer
      for (const [folioId, buyer, total] of [
        [companyFolio.id, company, 625_00n],
        [guestFolio.id, undefined, 40_00n],
      ] as const) {
        const draft = (await c.folios.createInvoiceDraft({ folioId, ...(buyer ? { buyer } : {}) })).invoice!;
        const issued = (await c.folios.finalizeInvoice({ invoiceId: draft.id })).invoice!;
        expect([issued.status, issued.totalMinor]).toEqual([InvoiceStatus.ISSUED, total]);
      }
    },
  );

  it.each(["gRPC", "Connect"] as const)(
    "%s: a bad account id is 400, another property's account 404, and settling needs folio.post",
    async (face) => {
      const c = faces[face]!;
      const { reservationId, lineId } = await checkedIn(c);
      const bad = await failure(
        c.reservations.checkOutRoomLine({ reservationId, reservationRoomId: lineId, settleToAccountId: "nope" }),
      );
      expect([bad.grpc, bad.code, bad.fields]).toEqual([
        Code.InvalidArgument,
        "invalid_argument",
        ["settleToAccountId"],
      ]);
      const foreign = await failure(
        c.reservations.checkOutRoomLine({
          reservationId,
          reservationRoomId: lineId,
          settleToAccountId: otherAccountId,
        }),
      );
      expect([foreign.grpc, foreign.code]).toEqual([Code.NotFound, "not_found"]);
      const denied = await failure(
        checkOutOnly.reservations.checkOutRoomLine({
          reservationId,
          reservationRoomId: lineId,
          settleToAccountId: otherAccountId,
        }),
      );
      expect([denied.grpc, denied.code]).toEqual([Code.PermissionDenied, "forbidden"]);
      expect((await c.reservations.getReservation({ reservationId })).reservation!.status).toBe(
        ReservationStatus.IN_HOUSE,
      );
    },
  );
});
