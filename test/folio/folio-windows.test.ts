import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, type Client } from "@connectrpc/connect";
import { ChargeKind, FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import {
  seedInvoiceIssuer,
  seedReservation,
  seedRoomTypeAndRatePlan,
  type SeededProperty,
} from "../helpers/hotel-fixtures.ts";
import { failure, folioClients, istanbulToday } from "../invoices/fixtures.ts";

// Several folios per reservation (windows), routing rules, transfers between folios, an invoice per folio and a
// return invoice's credit line, on gRPC and Connect (FolioService has no REST routes for these).
let app: TestApp;
let hotel: SeededProperty;
let grpc: Client<typeof FolioService>;
let connect: Client<typeof FolioService>;
let viewer: Client<typeof FolioService>;
let other: Client<typeof FolioService>;
const faces = [
  ["gRPC", () => grpc],
  ["Connect", () => connect],
] as const;

beforeAll(async () => {
  app = await startTestApp();
  const today = istanbulToday();
  const p = await createTestProperty(app, { businessDate: today });
  const q = await createTestProperty(app, { businessDate: today });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  await seedInvoiceIssuer(app.db.pool, hotel.id);
  ({ grpc, connect } = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken,
  ));
  viewer = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: p.code, role: "viewer" })).accessToken,
  ).grpc;
  other = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: q.code, role: "manager" })).accessToken,
  ).connect;
});
afterAll(async () => {
  await app?.close();
});

const stay = () =>
  seedReservation(app.db.pool, hotel, {
    arrival: istanbulToday(),
    departure: "2099-01-01",
    nightly: [1000_00n],
  });

async function nightAuditRoomCharge(reservationId: string, roomLineId: string, amountMinor: bigint): Promise<void> {
  await app.deps.transact((tx) =>
    app.services.folios.postRoomCharge(tx, hotel.id, {
      reservationId,
      reservationRoomId: roomLineId,
      businessDate: istanbulToday(),
      amountMinor,
      description: "Konaklama",
      actor: "user:test",
    }),
  );
}

async function audit(entityId: string): Promise<string[]> {
  const { rows } = await app.db.pool.query<{ action: string }>(
    `select action from audit_changes where property_id = $1 and entity_type = 'folio' and entity_id = $2 order by at, id`,
    [hotel.id, entityId],
  );
  return rows.map((r) => r.action);
}

describe("several folios per reservation", () => {
  it.each(faces)(
    "%s: the company pays the room, the guest the extras: routing, transfer, an invoice per folio",
    async (_face, c) => {
      const r = await stay();
      const guest = (await c().getFolio({ reservationId: r.id })).folio!;
      expect(guest).toMatchObject({ window: 1, name: "" });
      const company = (await c().createFolio({ reservationId: r.id, name: "Company" })).folio!;
      expect(company).toMatchObject({ window: 2, name: "Company", reservationId: r.id, balanceMinor: 0n });
      expect(company.number).not.toBe(guest.number);
      expect((await c().getFolio({ reservationId: r.id, window: 2 })).folio!.id).toBe(company.id);

      const rules = await c().setFolioRoutingRule({ reservationId: r.id, chargeCode: "room", folioId: company.id });
      expect(rules.routingRules).toEqual([expect.objectContaining({ chargeCode: "ROOM", window: 2 })]);
      // the night audit's room night goes to the company folio, the minibar stays with the guest
      await nightAuditRoomCharge(r.id, r.roomLineId, 1000_00n);
      const minibar = (
        await c().postCharge({ folioId: guest.id, code: "MINIBAR", description: "Su", amountMinor: 40_00n })
      ).charge!;
      expect(minibar.folioId).toBe(guest.id);
      // a routed extra posted to the default folio lands on the company folio
      await c().setFolioRoutingRule({ reservationId: r.id, chargeCode: "PARKING", folioId: company.id });
      const parking = (
        await c().postCharge({ folioId: guest.id, code: "PARKING", description: "Otopark", amountMinor: 25_00n })
      ).charge!;
      expect(parking.folioId).toBe(company.id);

      let listed = await c().listFolios({ reservationId: r.id });
      expect(listed.folios.map((f) => [f.window, f.balanceMinor])).toEqual([
        [1, 40_00n],
        [2, 1025_00n],
      ]);
      expect(listed.routingRules.map((x) => x.chargeCode)).toEqual(["PARKING", "ROOM"]);

      // the guest takes the parking after all: both sides move in one transaction, the total is unchanged
      const moved = await c().transferCharge({ chargeId: parking.id, toFolioId: guest.id });
      expect(moved.charge!.folioId).toBe(guest.id);
      expect(moved.fromFolio!.balanceMinor).toBe(1000_00n);
      expect(moved.toFolio!.balanceMinor).toBe(65_00n);
      expect(await audit(company.id)).toEqual(expect.arrayContaining(["open", "route", "charge", "transfer_out"]));
      expect(await audit(guest.id)).toContain("transfer_in");

      // removing the rule sends PARKING back to the folio it is posted to
      await c().setFolioRoutingRule({ reservationId: r.id, chargeCode: "PARKING", folioId: "" });
      listed = await c().listFolios({ reservationId: r.id });
      expect(listed.routingRules.map((x) => x.chargeCode)).toEqual(["ROOM"]);

      // an invoice per folio: each takes its own folio's charges only
      const companyInvoice = (await c().createInvoiceDraft({ folioId: company.id })).invoice!;
      const guestInvoice = (await c().createInvoiceDraft({ folioId: guest.id })).invoice!;
      expect(companyInvoice.totalMinor).toBe(1000_00n);
      expect(guestInvoice.totalMinor).toBe(65_00n);
      await c().finalizeInvoice({ invoiceId: companyInvoice.id });
      // an invoiced charge stays on its folio
      const room = (await c().getFolio({ folioId: company.id })).folio!.charges[0]!;
      expect((await failure(c().transferCharge({ chargeId: room.id, toFolioId: guest.id }))).code).toBe(
        "invalid_transition",
      );

      // the reservation's balance for reports and the night audit is the sum of its folios
      const { rows } = await app.db.pool.query<{ s: string }>(
        `select sum(balance_minor)::text as s from folios where property_id = $1 and reservation_id = $2`,
        [hotel.id, r.id],
      );
      expect(BigInt(rows[0]!.s)).toBe(1065_00n);
    },
  );

  it.each(faces)("%s: a return invoice shows on the folio as a credit line", async (_face, c) => {
    const r = await stay();
    const folio = (await c().getFolio({ reservationId: r.id })).folio!;
    await c().postCharge({ folioId: folio.id, code: "MINIBAR", description: "Minibar", amountMinor: 45_00n });
    await c().postCharge({ folioId: folio.id, code: "LAUNDRY", description: "Çamaşır", amountMinor: 120_00n });
    await c().postPayment({ folioId: folio.id, amountMinor: 165_00n, methodCode: "CASH" });
    const draft = (await c().createInvoiceDraft({ folioId: folio.id })).invoice!;
    const issued = (await c().finalizeInvoice({ invoiceId: draft.id })).invoice!;
    const laundry = issued.lines.find((l) => l.chargeCode === "LAUNDRY")!;
    const ret = (await c().createReturnInvoiceDraft({ invoiceId: issued.id, lineNos: [laundry.lineNo] })).invoice!;
    expect((await c().getFolio({ folioId: folio.id })).folio!.balanceMinor).toBe(0n); // a draft changes nothing
    const returned = (await c().finalizeInvoice({ invoiceId: ret.id })).invoice!;
    const after = (await c().getFolio({ folioId: folio.id })).folio!;
    const credit = after.charges.find((x) => x.kind === ChargeKind.CREDIT)!;
    expect(credit).toMatchObject({ code: "RETURN", amountMinor: -120_00n, invoiceId: returned.id, folioId: folio.id });
    expect(credit.description).toContain(returned.number!);
    expect(after).toMatchObject({ chargesMinor: 45_00n, balanceMinor: -120_00n, creditMinor: 120_00n });
    // the guest gets the money back: the folio balances to the minor unit
    const cash = after.payments[0]!;
    await c().refundPayment({ paymentId: cash.id, amountMinor: 120_00n, reference: "İade" });
    expect((await c().getFolio({ folioId: folio.id })).folio!.balanceMinor).toBe(0n);
    expect(await audit(folio.id)).toContain("credit");
    // the credit line is on its invoice: it is never drafted again, nor moved
    expect((await failure(c().createInvoiceDraft({ folioId: folio.id }))).code).toBe("validation_failed");
    const second = (await c().createFolio({ reservationId: r.id, name: "Extras" })).folio!;
    expect((await failure(c().transferCharge({ chargeId: credit.id, toFolioId: second.id }))).code).toBe(
      "invalid_transition",
    );
  });

  it.each(faces)("%s: bad input is 4xx naming the field; other properties are 404; viewers are 403", async (_f, c) => {
    const r = await stay();
    const folio = (await c().getFolio({ reservationId: r.id })).folio!;
    const charge = (await c().postCharge({ folioId: folio.id, code: "SPA", description: "Spa", amountMinor: 10_00n }))
      .charge!;
    expect(await failure(c().createFolio({ reservationId: r.id, name: " " }))).toMatchObject({
      grpc: Code.InvalidArgument,
      fields: ["name"],
    });
    expect((await failure(c().createFolio({ reservationId: "nope", name: "X" }))).fields).toEqual(["reservationId"]);
    expect((await failure(c().getFolio({ reservationId: r.id, window: 12 }))).fields).toEqual(["window"]);
    expect((await failure(c().getFolio({ reservationId: r.id, window: 5 }))).grpc).toBe(Code.NotFound);
    expect((await failure(c().transferCharge({ chargeId: charge.id, toFolioId: folio.id }))).fields).toEqual([
      "toFolioId",
    ]);
    expect((await failure(c().transferCharge({ chargeId: "x", toFolioId: folio.id }))).fields).toEqual(["chargeId"]);
    expect(
      (await failure(c().setFolioRoutingRule({ reservationId: r.id, chargeCode: "bad code", folioId: "" }))).fields,
    ).toEqual(["chargeCode"]);
    const otherStay = await stay();
    const otherFolio = (await c().getFolio({ reservationId: otherStay.id })).folio!;
    expect(
      await failure(c().setFolioRoutingRule({ reservationId: r.id, chargeCode: "SPA", folioId: otherFolio.id })),
    ).toMatchObject({ code: "validation_failed", fields: ["folioId"] });
    for (let i = 2; i <= 9; i++) await c().createFolio({ reservationId: r.id, name: `W${i}` });
    expect((await failure(c().createFolio({ reservationId: r.id, name: "Ten" }))).code).toBe("invalid_transition");

    // another property's caller: 404, never 403
    expect((await failure(other.createFolio({ reservationId: r.id, name: "X" }))).grpc).toBe(Code.NotFound);
    expect((await failure(other.listFolios({ reservationId: r.id }))).grpc).toBe(Code.NotFound);
    expect((await failure(other.transferCharge({ chargeId: charge.id, toFolioId: folio.id }))).grpc).toBe(
      Code.NotFound,
    );
    // a viewer reads but does not post
    expect((await viewer.listFolios({ reservationId: r.id })).folios).toHaveLength(9);
    expect((await failure(viewer.createFolio({ reservationId: r.id, name: "X" }))).grpc).toBe(Code.PermissionDenied);
    expect((await failure(viewer.transferCharge({ chargeId: charge.id, toFolioId: otherFolio.id }))).grpc).toBe(
      Code.PermissionDenied,
    );
  });
});
