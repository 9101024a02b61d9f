// Invoices to the Turkish standard, through the service code on one embedded PostgreSQL: finalizing the invoice of
// a 30-night stay (30 room nights and 10 extras) with its UBL-TR XML, target p50 under 50 ms; rendering its PDF,
// target p50 under 200 ms. Each run drafts and finalizes RUNS invoices of their own folios. It also times GİB's UBL-TR
// rules on each document as the delivery job runs them before the upload (compiled once per process, timed apart),
// batched as finalize runs them and, beside it, the reference run (one fontoxpath call per test) on the same document.
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { addDays } from "../src/lib/dates.ts";
import { seedInvoiceIssuer, seedReservation, seedRoomTypeAndRatePlan } from "../test/helpers/hotel-fixtures.ts";
import { compileGibRules, gibRuleFailures } from "../src/modules/invoices/gib-rules.ts";
import { benchDatabase } from "./harness.ts";

const RUNS = 30;
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchInvoices(): Promise<void> {
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  try {
    const p = await app.services.admin.createProperty({
      groupCode: "BENCH",
      code: "INV-BENCH",
      name: "Invoice bench",
      timeZone: "Europe/Istanbul",
      currency: "TRY",
      amountScale: 100,
      businessDate: "2027-02-01",
      emailVerification: false,
      sandbox: false,
    });
    const hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
    await seedInvoiceIssuer(app.db.pool, p.id);
    const { folios, invoices } = app.services;
    const finalizeMs: number[] = [];
    const pdfMs: number[] = [];
    const rulesMs: number[] = [];
    const referenceMs: number[] = [];
    let t0 = performance.now();
    compileGibRules();
    const compileMs = performance.now() - t0;
    for (let run = 0; run < RUNS; run++) {
      const nightly = Array.from({ length: 30 }, (_, i) => BigInt(1500_00 + (i % 3) * 100_00));
      const r = await seedReservation(app.db.pool, hotel, { arrival: "2027-01-01", departure: "2027-01-31", nightly });
      for (let i = 0; i < 30; i++)
        await app.deps.transact((tx) =>
          folios.postRoomCharge(tx, p.id, {
            reservationId: r.id,
            reservationRoomId: r.roomLineId,
            businessDate: addDays("2027-01-01", i),
            amountMinor: nightly[i]!,
            description: "Konaklama",
            actor: "user:bench",
          }),
        );
      const folio = await folios.getFolio(p.id, { reservationId: r.id });
      for (let i = 0; i < 10; i++)
        await folios.postCharge(p.id, "user:bench", {
          folioId: folio.id,
          code: `X${i % 4}`,
          description: "Minibar",
          amountMinor: BigInt(45_00 + i),
        });
      const draft = await invoices.createDraft(p.id, "user:bench", { folioId: folio.id });
      let t = performance.now();
      await invoices.finalize(p.id, "user:bench", { invoiceId: draft.id });
      finalizeMs.push(performance.now() - t);
      t = performance.now();
      await invoices.getDocument(p.id, { invoiceId: draft.id, format: "pdf" });
      pdfMs.push(performance.now() - t);
      const xml = Buffer.from(
        (await invoices.getDocument(p.id, { invoiceId: draft.id, format: "xml" })).content,
      ).toString("utf8");
      t0 = performance.now();
      // the bench hotel lives on its business date, as the job under that clock would see it
      const failures = gibRuleFailures(xml, "2027-02-01");
      rulesMs.push(performance.now() - t0);
      t0 = performance.now();
      gibRuleFailures(xml, "2027-02-01", false);
      referenceMs.push(performance.now() - t0);
      if (failures.length > 0)
        throw new Error(`GİB's rules refuse the bench's document: ${JSON.stringify(failures[0])}`);
    }
    console.log("measure                                        p50      target");
    for (const [name, xs, target] of [
      ["finalize a 30-night folio invoice with its XML", finalizeMs, 50],
      ["its PDF", pdfMs, 200],
    ] as const) {
      const v = p50(xs);
      console.log(
        `${name.padEnd(46)} ${`${v.toFixed(1)} ms`.padStart(8)}  < ${target} ms ${v < target ? "" : "MISSED"}`,
      );
    }
    console.log(
      `${"GİB's rules on its document (in finalize)".padEnd(46)} ${`${p50(rulesMs).toFixed(1)} ms`.padStart(8)}`,
    );
    console.log(
      `${"  the same, reference run (one call per test)".padEnd(46)} ${`${p50(referenceMs).toFixed(1)} ms`.padStart(8)}`,
    );
    console.log(`${"compiling GİB's rules (once per process)".padEnd(46)} ${`${compileMs.toFixed(0)} ms`.padStart(8)}`);
  } finally {
    await app.close();
    await database.stop();
  }
}
