import type { Transact, Tx } from "../../db/transaction.ts";
import type { Boss } from "../../jobs/boss.ts";
import { queues } from "../../jobs/queues.ts";
import type { IntegratorConfig } from "../../config.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { findDocument } from "./documents.repository.ts";
import { findInvoice } from "./invoice.repository.ts";
import { findDelivery, updateDelivery, type Delivery, type DeliveryChange } from "./deliveries.repository.ts";
import { auditDelivery, ISTANBUL_DATE } from "./invoice-read.ts";
import { IntegratorTransportError, type IntegratorAnswer, type IntegratorSender } from "./integrator.ts";
import { compileGibRules, describeRuleFailures, gibRuleFailures } from "./gib-rules.ts";

export interface DeliveryJobData {
  propertyId: string;
  invoiceId: string;
}

export interface DeliveryDeps {
  transact: Transact;
  clock: Clock;
  sender: IntegratorSender;
  /** Seconds between status questions while a document is SENT. */
  pollSeconds: number;
}

/** Enqueues the next step of a delivery in the caller's transaction (after `delaySeconds`, if given). */
export async function enqueueDeliveryStep(tx: Tx, data: DeliveryJobData, delaySeconds?: number): Promise<void> {
  await tx.enqueue(queues.invoiceDelivery, data, delaySeconds !== undefined ? { startAfter: delaySeconds } : {});
}

/**
 * Changes a delivery under its row lock when it is still in `from` (a step that lost a race to a cancel or a
 * requeue changes nothing) and writes the change to the audit trail. Returns the row after, or undefined.
 */
async function transition(
  deps: DeliveryDeps,
  d: DeliveryJobData,
  from: readonly Delivery["status"][],
  action: string,
  change: (tx: Tx, before: Delivery) => Promise<DeliveryChange> | DeliveryChange,
): Promise<Delivery | undefined> {
  return deps.transact(async (tx) => {
    const before = await findDelivery(tx, d.propertyId, d.invoiceId, true);
    if (before === undefined || !from.includes(before.status)) return undefined;
    const after = await updateDelivery(tx, d.propertyId, d.invoiceId, await change(tx, before), deps.clock.now());
    if (after.status !== before.status) auditDelivery(tx, d.propertyId, d.invoiceId, action, before, after);
    return after;
  });
}

/** Records what the integrator said of an uploaded or polled document. */
async function recordAnswer(deps: DeliveryDeps, d: DeliveryJobData, answer: IntegratorAnswer): Promise<void> {
  const now = deps.clock.now();
  if (answer.status === "CANCELLED") return; // only a cancel makes it so, and that step records it
  if (answer.status === "REJECTED") {
    await transition(deps, d, ["QUEUED", "SENT"], "reject", () => ({
      status: "REJECTED",
      reason: answer.reason,
      decidedAt: now,
      lastError: null,
    }));
    return;
  }
  const sent = await transition(deps, d, ["QUEUED"], "send", async (tx) => {
    // still RECEIVED: ask again after the poll interval (ACCEPTED is recorded as its own step below)
    if (answer.status === "RECEIVED") await enqueueDeliveryStep(tx, d, deps.pollSeconds);
    return { status: "SENT", sentAt: now, lastError: null };
  });
  // A cancel that came while the upload was in flight: the integrator has the document now, so cancel it there.
  if (sent === undefined)
    await transition(deps, d, ["CANCELLED"], "cancel", async (tx) => {
      await enqueueDeliveryStep(tx, d);
      return { status: "CANCELLING" };
    });
  if (answer.status === "ACCEPTED")
    await transition(deps, d, ["SENT"], "accept", () => ({ status: "ACCEPTED", decidedAt: now, reason: null }));
}

/**
 * One step of an e-document's delivery, chosen by the row's status: QUEUED checks the stored XML against GİB's
 * UBL-TR rules again, now with Turkey's date of the upload (finalize checked every other rule; a document whose
 * issue date is after that is never sent: REJECTED with the rule in `reason`, as the integrator
 * would, and sent again only by RequeueInvoiceDelivery after a fix) and uploads it (keyed by the
 * ETTN, so a repeat after a crash is the same document at the integrator), SENT asks its status, CANCELLING
 * cancels it. A transport error is recorded and thrown, so pg-boss retries the job with backoff.
 */
async function runDeliveryStep(deps: DeliveryDeps, d: DeliveryJobData): Promise<void> {
  const started = await deps.transact(async (tx) => {
    const delivery = await findDelivery(tx, d.propertyId, d.invoiceId, true);
    if (delivery === undefined) return undefined;
    if (delivery.status === "QUEUED")
      await updateDelivery(tx, d.propertyId, d.invoiceId, { attempts: delivery.attempts + 1 }, deps.clock.now());
    const doc = await findDocument(tx, d.propertyId, d.invoiceId);
    const invoice = await findInvoice(tx, d.propertyId, d.invoiceId);
    return { delivery, doc, invoice };
  });
  if (started?.doc === undefined || started.invoice === undefined) return;
  const { delivery, doc, invoice } = started;
  try {
    if (delivery.status === "QUEUED") {
      const failures = gibRuleFailures(doc.xml, ISTANBUL_DATE.format(deps.clock.now()));
      if (failures.length > 0) {
        await recordAnswer(deps, d, { status: "REJECTED", reason: describeRuleFailures(failures) });
        return;
      }
      const answer = await deps.sender.send({
        ettn: delivery.ettn,
        number: invoice.number ?? "",
        profileId: invoice.profileId ?? "",
        xml: doc.xml,
      });
      await recordAnswer(deps, d, answer);
    } else if (delivery.status === "SENT") {
      const answer = await deps.sender.status(delivery.ettn);
      if (answer.status === "RECEIVED")
        await deps.transact(async (tx) => {
          const now = await findDelivery(tx, d.propertyId, d.invoiceId);
          if (now?.status === "SENT") await enqueueDeliveryStep(tx, d, deps.pollSeconds);
        });
      else await recordAnswer(deps, d, answer);
    } else if (delivery.status === "CANCELLING") {
      await deps.sender.cancel(delivery.ettn);
      await transition(deps, d, ["CANCELLING"], "cancelled", () => ({ status: "CANCELLED", lastError: null }));
    }
  } catch (err) {
    if (!(err instanceof IntegratorTransportError)) throw err;
    await transition(deps, d, [delivery.status], "error", () => ({ lastError: err.message }));
    throw err;
  }
}

/** The delivery worker (only where an integrator is configured: elsewhere the jobs wait for one). */
export async function startDeliveryJobs(
  boss: Boss,
  deps: Omit<DeliveryDeps, "pollSeconds">,
  config: IntegratorConfig,
  logger: Logger,
): Promise<void> {
  // GİB's rules are compiled once per process, before the first document waits for them
  compileGibRules();
  await boss.registerWorker<DeliveryJobData>(
    queues.invoiceDelivery,
    async (job) => {
      try {
        await runDeliveryStep({ ...deps, pollSeconds: config.pollSeconds }, job.data);
      } catch (err) {
        logger.warn({ err, invoiceId: job.data.invoiceId }, "e-document delivery step failed; retried");
        throw err;
      }
    },
    {
      // a status question or a retry due is fetched within 2 s (pg-boss sees startAfter only when it polls)
      pollingIntervalSeconds: 2,
      notifyPollingIntervalSeconds: 2,
      queue: {
        retryLimit: config.retryLimit,
        retryDelay: config.retryDelaySeconds,
        retryBackoff: true,
        retryDelayMax: config.retryDelayMaxSeconds,
      },
    },
  );
}
