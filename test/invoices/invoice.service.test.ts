import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { newId } from "../../src/lib/ids.ts";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";
import {
  seedInvoiceIssuer,
  seedProperty as seedBareProperty,
  seedReservation,
  type SeededProperty,
} from "../helpers/hotel-fixtures.ts";
import { createFolioService, type FolioService } from "../../src/modules/folio/index.ts";
import { createInvoiceService, type InvoiceService } from "../../src/modules/invoices/index.ts";

let t: TestDatabase;
let folios: FolioService;
let invoices: InvoiceService;
const clock = new ManualClock("2026-11-22T10:00:00.000Z");

beforeAll(async () => {
  t = await openTestDatabase({ role: "api" });
  folios = createFolioService({ transact: t.transact, clock });
  invoices = createInvoiceService({ transact: t.transact, clock });
});
afterAll(async () => {
  await t?.close();
});

/** A property with its invoice issuer set. */
async function seedProperty(pool: typeof t.db.pool, opts: Parameters<typeof seedBareProperty>[1] = {}) {
  const p = await seedBareProperty(pool, opts);
  await seedInvoiceIssuer(pool, p.id);
  return p;
}

async function folioWithCharges(p: SeededProperty, amounts: bigint[]) {
  const r = await seedReservation(t.db.pool, p, { arrival: "2026-11-22", departure: "2026-11-23", nightly: [100_00n] });
  const f = await folios.getFolio(p.id, { reservationId: r.id });
  for (const amountMinor of amounts)
    await folios.postCharge(p.id, "user:u1", { folioId: f.id, code: "EXTRA", description: "Service", amountMinor });
  return { reservation: r, folio: f };
}

async function code(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return (err as AppError).code;
}

describe("invoices", () => {
  it("drafts, finalizes with an E-Arşiv number and writes invoice.issued with exactly the documented fields", async () => {
    const p = await seedProperty(t.db.pool, { code: "DEMO-INV", businessDate: "2026-12-31" });
    const { reservation, folio } = await folioWithCharges(p, [100_00n, 12_00n]);
    const draft = await invoices.createDraft(p.id, "user:u1", { folioId: folio.id });
    expect(draft).toMatchObject({
      status: "DRAFT",
      type: "E_ARSIV",
      number: null,
      series: null,
      totalMinor: 112_00n,
      // Two extras, each split on its own at 10 % VAT, no accommodation tax (room nights only):
      // 10000 * 1000 / 11000 = 909.09 -> 909 and 1200 * 1000 / 11000 = 109.09 -> 109.
      netMinor: 100_00n + 12_00n - 1018n,
      taxMinor: 1018n,
      accommodationTaxMinor: 0n,
    });
    expect(draft.chargeIds).toHaveLength(2);
    clock.set("2027-01-01T00:30:00.000Z");
    const issued = await invoices.finalize(p.id, "user:u1", { invoiceId: draft.id });
    expect(issued).toMatchObject({
      status: "ISSUED",
      series: "DEM",
      number: "DEM2026000000001",
      issueDate: "2026-12-31",
    });
    expect(await invoices.getInvoice(p.id, draft.id)).toEqual(issued);
    const { rows } = await t.db.pool.query<{ data: unknown }>(
      `select data from domain_events where property_id = $1 and type = 'invoice.issued'`,
      [p.id],
    );
    expect(rows.map((r) => r.data)).toEqual([
      {
        invoiceId: draft.id,
        series: "DEM",
        number: "DEM2026000000001",
        type: "E_ARSIV",
        status: "ISSUED",
        issueDate: "2026-12-31",
        netMinor: 10182,
        taxMinor: 1018,
        accommodationTaxMinor: 0,
        totalMinor: 11200,
        amountScale: 100,
        currency: "TRY",
        folioId: folio.id,
        folioNumber: folio.number,
        reservationId: reservation.id,
      },
    ]);
    expect(await code(invoices.finalize(p.id, "user:u1", { invoiceId: draft.id }))).toBe("invalid_transition");
    // Everything is invoiced now: nothing left for a new draft.
    expect(await code(invoices.createDraft(p.id, "user:u1", { folioId: folio.id }))).toBe("validation_failed");
  });

  it("uses the property's rates and always adds up", async () => {
    // invoices are issued in TRY only (test/invoices/currency.test.ts); other scales are split alike (tax-split.test.ts)
    const p = await seedProperty(t.db.pool, { vatRateBp: 2000, accommodationTaxRateBp: 0 });
    const { folio } = await folioWithCharges(p, [1n, 999n, 33_333n]);
    const draft = await invoices.createDraft(p.id, "user:u1", { folioId: folio.id });
    expect(draft).toMatchObject({
      amountScale: 100,
      currency: "TRY",
      vatRateBp: 2000,
      accommodationTaxRateBp: 0,
      totalMinor: 34_333n,
      accommodationTaxMinor: 0n,
    });
    expect(draft.netMinor + draft.taxMinor + draft.accommodationTaxMinor).toBe(draft.totalMinor);
    // Per line: 1 -> 0.17 -> 0, 999 -> 166.5 -> 167, 33333 -> 5555.5 -> 5556.
    expect(draft.taxMinor).toBe(5_723n);
    expect(new Set(draft.items.map((i) => i.vatMinor))).toEqual(new Set([0n, 167n, 5556n]));
    // a property kept in another currency (with its own scale) is not invoiced
    const kwd = await seedProperty(t.db.pool, { amountScale: 1000, currency: "KWD" });
    const other = await folioWithCharges(kwd, [1n]);
    expect(await code(invoices.createDraft(kwd.id, "user:u1", { folioId: other.folio.id }))).toBe("validation_failed");
  });

  it("numbers gaplessly under 20 concurrent finalizations", async () => {
    const p = await seedProperty(t.db.pool, { code: "GAP-1" });
    const drafts = [];
    for (let i = 0; i < 20; i++) {
      const { folio } = await folioWithCharges(p, [BigInt(1000 + i)]);
      drafts.push(await invoices.createDraft(p.id, "user:u1", { folioId: folio.id }));
    }
    const issued = await Promise.all(drafts.map((d) => invoices.finalize(p.id, "user:u1", { invoiceId: d.id })));
    const numbers = issued.map((i) => i.number).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `GAP2026${String(i + 1).padStart(9, "0")}`));
    // each checked its document with the number the counter showed, before taking it; all but one found it taken
    // meanwhile and checked again: every stored document carries the number its invoice got
    for (const i of issued) {
      const xml = Buffer.from((await invoices.getDocument(p.id, { invoiceId: i.id, format: "xml" })).content);
      expect(xml.toString("utf8")).toContain(`<cbc:ID>${i.number}</cbc:ID>`);
    }
  });

  it("returns a number to the counter when finalizing fails (no gap after a conflict)", async () => {
    const p = await seedProperty(t.db.pool, { code: "RBK" });
    const { folio } = await folioWithCharges(p, [50_00n]);
    const a = await invoices.createDraft(p.id, "user:u1", { folioId: folio.id });
    const b = await invoices.createDraft(p.id, "user:u1", { folioId: folio.id });
    expect((await invoices.finalize(p.id, "user:u1", { invoiceId: a.id })).number).toBe("RBK2026000000001");
    expect(await code(invoices.finalize(p.id, "user:u1", { invoiceId: b.id }))).toBe("conflict");
    expect((await invoices.getInvoice(p.id, b.id)).status).toBe("DRAFT");
    const other = await folioWithCharges(p, [7_00n]);
    const c = await invoices.createDraft(p.id, "user:u1", { folioId: other.folio.id });
    expect((await invoices.finalize(p.id, "user:u1", { invoiceId: c.id })).number).toBe("RBK2026000000002");
  });

  it("keeps invoices of another property invisible and rejects bad ids", async () => {
    const p = await seedProperty(t.db.pool);
    const q = await seedProperty(t.db.pool);
    const { folio } = await folioWithCharges(p, [10_00n]);
    const draft = await invoices.createDraft(p.id, "user:u1", { folioId: folio.id });
    expect(await code(invoices.getInvoice(q.id, draft.id))).toBe("not_found");
    expect(await code(invoices.finalize(q.id, "user:u1", { invoiceId: draft.id }))).toBe("not_found");
    expect(await code(invoices.createDraft(q.id, "user:u1", { folioId: folio.id }))).toBe("not_found");
    expect(await code(invoices.getInvoice(p.id, "x"))).toBe("invalid_argument");
    expect(await code(invoices.getInvoice(p.id, newId()))).toBe("not_found");
    expect((await invoices.getInvoice(p.id, draft.id)).status).toBe("DRAFT");
  });
});
