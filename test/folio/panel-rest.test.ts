import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@connectrpc/connect";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedReservation, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { restCaller } from "../helpers/rest.ts";
import { folioClients } from "../invoices/fixtures.ts";

// The split-folio and city-ledger RPCs on their REST routes (/api/panel/v1): the same rules as on gRPC and Connect
// (test/folio/folio-windows.test.ts, test/folio/city-ledger.test.ts), our error body for bad input, 404 for another
// property's records, 403 without the permission, an audit entry for each change made over REST.
let app: TestApp;
let hotel: SeededProperty;
let accountant: string;
let frontDesk: string;
let viewer: string;
let otherManager: string;
let grpc: Client<typeof FolioService>;
const rest = restCaller(() => app.baseUrl);

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: "2026-06-01" });
  const q = await createTestProperty(app, { businessDate: "2026-06-01" });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  accountant = (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken;
  frontDesk = (await createStaffSession(app, { propertyCode: p.code, role: "front_desk" })).accessToken;
  viewer = (await createStaffSession(app, { propertyCode: p.code, role: "viewer" })).accessToken;
  otherManager = (await createStaffSession(app, { propertyCode: q.code, role: "manager" })).accessToken;
  grpc = folioClients(app.baseUrl, accountant).grpc;
});
afterAll(async () => {
  await app?.close();
});

async function auditActions(entity: string, entityId: string): Promise<string[]> {
  const { rows } = await app.db.pool.query<{ action: string; face: string }>(
    `select action, face from audit_changes where property_id = $1 and entity_type = $2 and entity_id = $3 order by at, id`,
    [hotel.id, entity, entityId],
  );
  return rows.map((r) => `${r.action}@${r.face}`);
}

describe("split folios and the city ledger over REST", () => {
  it("routes, transfers, settles to an account within its limit and takes a payment", async () => {
    const r = await seedReservation(app.db.pool, hotel, {
      arrival: "2026-06-01",
      departure: "2026-06-02",
      nightly: [1000_00n],
    });
    const base = `/api/panel/v1/reservations/${r.id}`;
    const opened = await rest("POST", `${base}/folios`, accountant, { name: "Company" });
    expect(opened.status).toBe(201);
    expect(opened.body.folio).toMatchObject({ window: 2, name: "Company", balanceMinor: 0 });
    const company = opened.body.folio.id as string;
    const routed = await rest("PUT", `${base}/routing-rules/MEETING`, accountant, { folioId: company });
    expect(routed).toMatchObject({ status: 200, body: { routingRules: [{ chargeCode: "MEETING", window: 2 }] } });
    const guestFolio = (await grpc.getFolio({ reservationId: r.id })).folio!.id;
    await grpc.postCharge({ folioId: guestFolio, code: "MEETING", description: "Toplantı", amountMinor: 300_00n });
    const minibar = (
      await grpc.postCharge({ folioId: guestFolio, code: "MINIBAR", description: "Minibar", amountMinor: 40_00n })
    ).charge!;
    const listed = await rest("GET", `${base}/folios`, accountant);
    expect(listed.status).toBe(200);
    expect(listed.body.folios.map((f: { window: number; balanceMinor: number }) => [f.window, f.balanceMinor])).toEqual(
      [
        [1, 40_00],
        [2, 300_00],
      ],
    );
    const moved = await rest("POST", `/api/panel/v1/charges/${minibar.id}/transfer`, accountant, {
      toFolioId: company,
    });
    expect(moved.status).toBe(200);
    expect([moved.body.fromFolio.balanceMinor, moved.body.toFolio.balanceMinor]).toEqual([0, 340_00]);

    const created = await rest("POST", "/api/panel/v1/ledger-accounts", accountant, {
      code: "acme-rest",
      name: "Acme Ltd.",
      kind: "COMPANY",
      creditLimitMinor: 100_00,
    });
    expect(created.status).toBe(201);
    const acme = created.body.account.id as string;
    const beyond = await rest("POST", `/api/panel/v1/folios/${company}/settle-to-account`, accountant, {
      accountId: acme,
    });
    expect(beyond.status).toBe(422);
    expect(beyond.body.error).toMatchObject({ code: "validation_failed", details: [{ field: "creditLimitMinor" }] });
    const raised = await rest("PATCH", `/api/panel/v1/ledger-accounts/${acme}`, accountant, {
      name: "Acme Ltd.",
      creditLimitMinor: 1000_00,
    });
    expect(raised).toMatchObject({ status: 200, body: { account: { creditLimitMinor: 1000_00 } } });
    const settled = await rest("POST", `/api/panel/v1/folios/${company}/settle-to-account`, accountant, {
      accountId: acme,
    });
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({
      account: { balanceMinor: 340_00 },
      item: { kind: "FOLIO", openMinor: 340_00 },
    });
    const paid = await rest("POST", `/api/panel/v1/ledger-accounts/${acme}/payments`, accountant, {
      amountMinor: 100_00,
      methodCode: "TRANSFER",
      reference: "EFT 1",
    });
    expect(paid.status).toBe(201);
    expect(paid.body.account.balanceMinor).toBe(240_00);
    const statement = await rest("GET", `/api/panel/v1/ledger-accounts/${acme}/statement`, accountant);
    expect(statement.body.items.map((i: { kind: string; openMinor: number }) => [i.kind, i.openMinor])).toEqual([
      ["FOLIO", 240_00],
      ["PAYMENT", 0],
    ]);
    const accounts = await rest("GET", "/api/panel/v1/ledger-accounts", accountant);
    expect(accounts.body.accounts.find((a: { id: string }) => a.id === acme)).toMatchObject({ balanceMinor: 240_00 });
    const ageing = await rest("GET", "/api/panel/v1/ledger-ageing", accountant);
    expect(ageing.body).toMatchObject({ businessDate: "2026-06-01" });
    expect(ageing.body.accounts.find((l: { account: { id: string } }) => l.account.id === acme)).toMatchObject({
      currentMinor: 240_00,
    });
    // each change made over REST is in the audit trail, marked as such
    expect(await auditActions("ledger_account", acme)).toEqual([
      "create@rest",
      "update@rest",
      "debit@rest",
      "payment@rest",
    ]);
  });

  it("answers bad input with our error body, another property's records with 404, a missing permission with 403", async () => {
    const r = await seedReservation(app.db.pool, hotel, {
      arrival: "2026-06-01",
      departure: "2026-06-02",
      nightly: [1000_00n],
    });
    const noName = await rest("POST", `/api/panel/v1/reservations/${r.id}/folios`, accountant, { name: "" });
    expect(noName.status).toBe(400);
    expect(noName.body.error).toMatchObject({ code: "invalid_argument", details: [{ field: "name" }] });
    expect(noName.body.error.requestId).toEqual(expect.any(String));
    const badKind = await rest("POST", "/api/panel/v1/ledger-accounts", accountant, {
      code: "X",
      name: "X",
      kind: "PERSON",
      creditLimitMinor: 1,
    });
    expect([badKind.status, badKind.body.error.details]).toEqual([
      400,
      [{ field: "kind", reason: expect.any(String) }],
    ]);
    const notUuid = await rest("GET", "/api/panel/v1/ledger-accounts/nope/statement", accountant);
    expect([notUuid.status, notUuid.body.error.code]).toEqual([400, "invalid_argument"]);
    // another property's reservation is not found, as a missing one
    const foreign = await rest("GET", `/api/panel/v1/reservations/${r.id}/folios`, otherManager);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "not_found"]);
    // the front desk may not manage accounts; a viewer may not open folios
    const desk = await rest("GET", "/api/panel/v1/ledger-ageing", frontDesk);
    expect([desk.status, desk.body.error.code]).toEqual([403, "forbidden"]);
    const view = await rest("POST", `/api/panel/v1/reservations/${r.id}/folios`, viewer, { name: "Extras" });
    expect([view.status, view.body.error.code]).toEqual([403, "forbidden"]);
  });
});
