import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, type Client } from "@connectrpc/connect";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedReservation, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { failure, folioClients } from "../invoices/fixtures.ts";

// The city ledger on gRPC and Connect: accounts with a credit limit, a folio settled to one at check-out,
// payments allocated to open items, the statement and the ageing report by the business date.
let app: TestApp;
let hotel: SeededProperty;
let grpc: Client<typeof FolioService>;
let connect: Client<typeof FolioService>;
let frontDesk: Client<typeof FolioService>;
let other: Client<typeof FolioService>;
const faces = [
  ["gRPC", () => grpc],
  ["Connect", () => connect],
] as const;
let n = 0;

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: "2026-06-01" });
  const q = await createTestProperty(app, { businessDate: "2026-06-01" });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  ({ grpc, connect } = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken,
  ));
  frontDesk = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: p.code, role: "front_desk" })).accessToken,
  ).grpc;
  other = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: q.code, role: "manager" })).accessToken,
  ).connect;
});
afterAll(async () => {
  await app?.close();
});

async function setBusinessDate(date: string): Promise<void> {
  await app.db.pool.query(`update properties set business_date = $2 where id = $1`, [hotel.id, date]);
}

/** A reservation's folio with `amount` of extras on it. */
async function folioOwing(c: Client<typeof FolioService>, amountMinor: bigint): Promise<string> {
  const r = await seedReservation(app.db.pool, hotel, {
    arrival: "2026-06-01",
    departure: "2026-06-02",
    nightly: [1000_00n],
  });
  const folio = (await c.getFolio({ reservationId: r.id })).folio!;
  await c.postCharge({ folioId: folio.id, code: "MEETING", description: "Toplantı", amountMinor });
  return folio.id;
}

const account = async (c: Client<typeof FolioService>, creditLimitMinor: bigint) =>
  (await c.createLedgerAccount({ code: `acme-${++n}`, name: "Acme Ltd.", kind: "COMPANY", creditLimitMinor })).account!;

async function ledgerAudit(accountId: string): Promise<string[]> {
  const { rows } = await app.db.pool.query<{ action: string }>(
    `select action from audit_changes where property_id = $1 and entity_type = 'ledger_account' and entity_id = $2
     order by at, id`,
    [hotel.id, accountId],
  );
  return rows.map((r) => r.action);
}

describe("city ledger", () => {
  it.each(faces)(
    "%s: settles folios within the credit limit, takes payments oldest first or as named",
    async (_f, c) => {
      await setBusinessDate("2026-06-01");
      const acme = await account(c(), 5000_00n);
      expect(acme).toMatchObject({ code: `ACME-${n}`, kind: "COMPANY", balanceMinor: 0n, creditLimitMinor: 5000_00n });

      // at check-out the front desk puts the folio on the account: the folio balances, the account owes
      const f1 = await folioOwing(c(), 3000_00n);
      const s1 = await frontDesk.settleFolioToAccount({ folioId: f1, accountId: acme.id });
      expect(s1.payment).toMatchObject({ amountMinor: 3000_00n, methodCode: "CITY_LEDGER", methodKind: "CITY_LEDGER" });
      expect(s1.item).toMatchObject({ kind: "FOLIO", folioId: f1, amountMinor: 3000_00n, openMinor: 3000_00n });
      expect(s1.account!.balanceMinor).toBe(3000_00n);
      expect((await c().getFolio({ folioId: f1 })).folio!.balanceMinor).toBe(0n);
      // nothing left to settle
      expect((await failure(c().settleFolioToAccount({ folioId: f1, accountId: acme.id }))).code).toBe(
        "invalid_transition",
      );

      // beyond the credit limit: 422 naming it, nothing changes
      await setBusinessDate("2026-06-20");
      const f2 = await folioOwing(c(), 2500_00n);
      expect(await failure(c().settleFolioToAccount({ folioId: f2, accountId: acme.id }))).toMatchObject({
        grpc: Code.InvalidArgument,
        code: "validation_failed",
        fields: ["creditLimitMinor"],
      });
      expect((await c().getFolio({ folioId: f2 })).folio!.balanceMinor).toBe(2500_00n);
      // a higher limit lets it through
      await c().updateLedgerAccount({ accountId: acme.id, name: "Acme Ltd. Şti.", creditLimitMinor: 6000_00n });
      const s2 = await c().settleFolioToAccount({ folioId: f2, accountId: acme.id });
      expect(s2.account).toMatchObject({ balanceMinor: 5500_00n, name: "Acme Ltd. Şti." });

      // oldest first: 3200.00 pays the first debit in full and 200.00 of the second
      await setBusinessDate("2026-06-25");
      const p1 = await c().postAccountPayment({ accountId: acme.id, amountMinor: 3200_00n, methodCode: "EFT" });
      expect(p1.allocations.map((a) => [a.debitItemId, a.amountMinor])).toEqual([
        [s1.item!.id, 3000_00n],
        [s2.item!.id, 200_00n],
      ]);
      expect(p1.item).toMatchObject({ kind: "PAYMENT", openMinor: 0n });
      // named: 100.00 of the second debit, the rest stays open on the payment
      const p2 = await c().postAccountPayment({
        accountId: acme.id,
        amountMinor: 500_00n,
        methodCode: "TRANSFER",
        reference: "Havale 42",
        allocations: [{ itemId: s2.item!.id, amountMinor: 100_00n }],
      });
      expect(p2.item!.openMinor).toBe(400_00n);
      expect(p2.account!.balanceMinor).toBe(5500_00n - 3700_00n);

      const st = await c().getAccountStatement({ accountId: acme.id });
      expect(st.items.map((i) => [i.kind, i.amountMinor, i.openMinor])).toEqual([
        ["FOLIO", 3000_00n, 0n],
        ["FOLIO", 2500_00n, 2200_00n],
        ["PAYMENT", 3200_00n, 0n],
        ["PAYMENT", 500_00n, 400_00n],
      ]);
      expect(st.allocations).toHaveLength(3);
      // the account balances to the minor unit: open debits - open payments
      const open = st.items.reduce((s, i) => s + (i.kind === "FOLIO" ? i.openMinor : -i.openMinor), 0n);
      expect(open).toBe(st.account!.balanceMinor);
      expect(await ledgerAudit(acme.id)).toEqual(["create", "debit", "update", "debit", "payment", "payment"]);

      // ageing on 2026-09-05: the 2026-06-20 debit is 77 days old, in the 60-89 column
      await setBusinessDate("2026-09-05");
      const report = await c().getAgeingReport({});
      const line = report.accounts.find((a) => a.account!.id === acme.id)!;
      expect(report.businessDate).toBe("2026-09-05");
      expect(line).toMatchObject({
        currentMinor: 0n,
        days30Minor: 0n,
        days60Minor: 2200_00n,
        days90Minor: 0n,
        unallocatedMinor: 400_00n,
        balanceMinor: 1800_00n,
      });
    },
  );

  it("ages open debits into current, 30, 60 and 90+ by the business date", async () => {
    const acme = await account(grpc, 10_000_00n);
    for (const [date, amount] of [
      ["2026-01-01", 1_00n],
      ["2026-02-10", 10_00n],
      ["2026-03-15", 100_00n],
      ["2026-04-05", 1000_00n],
    ] as const) {
      await setBusinessDate(date);
      await grpc.settleFolioToAccount({ folioId: await folioOwing(grpc, amount), accountId: acme.id });
    }
    await setBusinessDate("2026-04-20"); // ages 109, 69, 36 and 15 days
    const line = (await connect.getAgeingReport({})).accounts.find((a) => a.account!.id === acme.id)!;
    expect([line.currentMinor, line.days30Minor, line.days60Minor, line.days90Minor]).toEqual([
      1000_00n,
      100_00n,
      10_00n,
      1_00n,
    ]);
    expect(line.balanceMinor).toBe(1111_00n);
  });

  it.each(faces)("%s: bad input is 4xx naming the field; other properties 404; permissions", async (_f, c) => {
    const acme = await account(c(), 100_00n);
    expect((await failure(c().createLedgerAccount({ code: "x y", name: "A", kind: "COMPANY" }))).fields).toEqual([
      "code",
    ]);
    expect((await failure(c().createLedgerAccount({ code: "OK", name: "A", kind: "PERSON" }))).fields).toEqual([
      "kind",
    ]);
    expect(
      (await failure(c().createLedgerAccount({ code: "OK", name: "A", kind: "AGENCY", creditLimitMinor: -1n }))).fields,
    ).toEqual(["creditLimitMinor"]);
    expect((await failure(c().createLedgerAccount({ code: acme.code, name: "A", kind: "AGENCY" }))).code).toBe(
      "conflict",
    );
    expect(
      (await failure(c().postAccountPayment({ accountId: acme.id, amountMinor: 0n, methodCode: "EFT" }))).fields,
    ).toEqual(["amountMinor"]);
    expect(
      (await failure(c().postAccountPayment({ accountId: acme.id, amountMinor: 1n, methodCode: "CITY_LEDGER" })))
        .fields,
    ).toEqual(["methodCode"]);
    const f = await folioOwing(c(), 50_00n);
    const debit = (await c().settleFolioToAccount({ folioId: f, accountId: acme.id })).item!;
    expect(
      await failure(
        c().postAccountPayment({
          accountId: acme.id,
          amountMinor: 10_00n,
          methodCode: "EFT",
          allocations: [{ itemId: debit.id, amountMinor: 60_00n }],
        }),
      ),
    ).toMatchObject({ code: "validation_failed", fields: ["allocations[0].amountMinor"] });
    expect(
      await failure(
        c().postAccountPayment({
          accountId: acme.id,
          amountMinor: 10_00n,
          methodCode: "EFT",
          allocations: [{ itemId: debit.id, amountMinor: 20_00n }],
        }),
      ),
    ).toMatchObject({ code: "validation_failed", fields: ["allocations"] });
    expect((await failure(c().getAccountStatement({ accountId: "nope" }))).fields).toEqual(["accountId"]);

    // another property: 404 for its accounts and folios
    expect((await failure(other.getAccountStatement({ accountId: acme.id }))).grpc).toBe(Code.NotFound);
    expect((await failure(other.settleFolioToAccount({ folioId: f, accountId: acme.id }))).grpc).toBe(Code.NotFound);
    const otherAccount = (await other.createLedgerAccount({ code: `B-${++n}`, name: "B", kind: "AGENCY" })).account!;
    expect((await failure(c().settleFolioToAccount({ folioId: f, accountId: otherAccount.id }))).grpc).toBe(
      Code.NotFound,
    );
    expect((await c().listLedgerAccounts({})).accounts.some((a) => a.id === otherAccount.id)).toBe(false);
    // the front desk settles and lists, but does not manage accounts (accounts.manage)
    expect((await frontDesk.listLedgerAccounts({})).accounts.some((a) => a.id === acme.id)).toBe(true);
    for (const call of [
      () => frontDesk.createLedgerAccount({ code: "FD", name: "FD", kind: "COMPANY" }),
      () => frontDesk.postAccountPayment({ accountId: acme.id, amountMinor: 1n, methodCode: "EFT" }),
      () => frontDesk.getAccountStatement({ accountId: acme.id }),
      () => frontDesk.getAgeingReport({}),
    ])
      expect((await failure(call())).grpc).toBe(Code.PermissionDenied);
  });
});
