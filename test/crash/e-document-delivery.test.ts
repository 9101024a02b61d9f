import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { queues, takeoverBounds } from "../../src/jobs/queues.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestProperty } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { seedInvoiceIssuer, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { integratorEnv, startIntegratorReceiver, type IntegratorReceiver } from "../helpers/integrator-receiver.ts";
import { kill9, killAllServices, startService, until } from "../helpers/service-process.ts";
import { testSecretKey } from "../helpers/webhooks.ts";
import { deliveryAudit, istanbulToday, stayWithCharges } from "../invoices/fixtures.ts";

// kill -9 of the worker while it uploads an e-document (the integrator has the document but its answer never
// comes back): another worker takes the job over and uploads the same ETTN again, and the integrator holds one
// document. The workers are `npm start` processes (ROLE=worker); the API runs in this process (ROLE=api).
const bound = takeoverBounds[queues.invoiceDelivery];
if (bound === "next run") throw new Error("e-document delivery has a takeover bound");

let app: TestApp;
let receiver: IntegratorReceiver;
let hotel: SeededProperty;
let workerEnv: Record<string, string>;
let dataDir: string;

beforeAll(async () => {
  receiver = await startIntegratorReceiver();
  const databaseUrl = await freshDatabaseUrl();
  dataDir = mkdtempSync(join(tmpdir(), "delivery-crash-"));
  app = await startTestApp({ databaseUrl, env: { ROLE: "api" } });
  const p = await createTestProperty(app, { businessDate: istanbulToday() });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  await seedInvoiceIssuer(app.db.pool, hotel.id);
  // the upload is held longer than the whole test: only the kill ends it
  workerEnv = {
    ROLE: "worker",
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    WEBHOOK_SECRET_KEY: testSecretKey,
    ...integratorEnv(receiver, { EDOCUMENT_INTEGRATOR_TIMEOUT_MS: "30000" }),
  };
}, 120_000);
afterAll(async () => {
  killAllServices();
  await app?.close();
  await receiver?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("e-document delivery under kill -9", () => {
  it(
    "a worker killed mid-upload: another takes over and the integrator handles the document once by ETTN",
    { timeout: 180_000 },
    async () => {
      const first = await startService(workerEnv);
      receiver.script.push("hang");
      const folioId = await stayWithCharges(app, hotel, istanbulToday());
      const draft = await app.services.invoices.createDraft(hotel.id, "user:test", { folioId });
      const issued = await app.services.invoices.finalize(hotel.id, "user:test", { invoiceId: draft.id });
      const ettn = issued.ettn!;
      // the upload reached the integrator, which stored the document; its answer is held
      await until(async () => receiver.documents.get(ettn)?.uploads === 1, 30_000, "the first upload");
      const killedAt = Date.now();
      await kill9(first);
      const second = await startService(workerEnv);
      const accepted = await until(
        async () => {
          const i = await app.services.invoices.getInvoice(hotel.id, issued.id);
          return i.delivery?.status === "ACCEPTED" ? i : undefined;
        },
        (bound.afterKill + 30) * 1000,
        "the delivery accepted after the kill",
      );
      const takeoverSeconds = (Date.now() - killedAt) / 1000;
      console.log(
        `e-document delivery: kill -9 to ACCEPTED in ${takeoverSeconds.toFixed(1)} s (bound ${bound.afterKill} s)`,
      );
      expect(takeoverSeconds).toBeLessThan(bound.afterKill);
      const doc = receiver.documents.get(ettn)!;
      // one document for the ETTN, reached by two uploads (the killed one and the takeover's)
      expect([doc.created, doc.uploads, receiver.documents.size]).toEqual([1, 2, 1]);
      expect(receiver.requests.filter((r) => r.startsWith("PUT ")).length).toBe(2);
      expect(accepted.delivery).toMatchObject({ attempts: 2, lastError: null });
      expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual(["queue", "send", "accept"]);
      await kill9(second);
    },
  );
});
