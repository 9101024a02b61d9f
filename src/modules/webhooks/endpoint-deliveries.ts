import type pg from "pg";
import { poolQueryable } from "../../db/queryable.ts";
import type { Transact } from "../../db/transaction.ts";
import { AppError } from "../../errors.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { getPlatformSettings } from "../platform/index.ts";
import type { WebhookEngine } from "./engine.ts";
import {
  checkHistoryFilters,
  decodeCursor,
  encodeCursor,
  type HistoryPage,
  type StaffActor,
} from "./endpoint-input.ts";
import { copyDelivery, insertTestDelivery } from "./endpoint-writes.repository.ts";
import { createEndpointsRepository, type Endpoint, type HistoryEntry } from "./endpoints.repository.ts";
import { testEventType } from "./event-types.ts";
import type { Recoveries, Recovery } from "./recovery.ts";

const historyDays = 30;

export interface TestResult {
  deliveryId: string;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
}

interface DeliveriesDeps {
  pool: pg.Pool;
  transact: Transact;
  clock: Clock;
  engine: WebhookEngine;
  recoveries: Recoveries;
}

/** What staff do with an address's deliveries: a test event, a recovery, the history, a re-send. */
export function createEndpointDeliveries(
  d: DeliveriesDeps,
  mustGet: (actor: StaffActor, id: string) => Promise<Endpoint>,
) {
  const repo = createEndpointsRepository(d.pool);
  return {
    /** Sends webhook.test at once (signed like any event) and answers with the outcome of that one attempt. */
    async sendTest(actor: StaffActor, id: string): Promise<TestResult> {
      await mustGet(actor, id);
      if (!(await getPlatformSettings(poolQueryable(d.pool))).partnerApiEnabled)
        throw new AppError("conflict", "Webhooks are switched off platform-wide while the partner API is disabled.");
      const now = d.clock.now();
      const deliveryId = newId(now.getTime());
      await insertTestDelivery(d.pool, {
        id: deliveryId,
        propertyId: actor.propertyId,
        endpointId: id,
        eventId: newId(now.getTime()),
        eventType: testEventType,
        now,
      });
      const [outcome] = await d.engine.attempt([deliveryId]);
      if (outcome === undefined) throw new AppError("conflict", "The test event could not be sent.");
      return {
        deliveryId,
        httpStatus: outcome.httpStatus,
        durationMs: outcome.durationMs,
        error: outcome.errorMessage,
      };
    },

    /**
     * Re-sends to an OPEN address every event whose delivery failed or was stopped by closing since `since`
     * (at most 30 days back), in the background and paced by the address's limits. A recovery already running
     * for the address is answered instead of starting a second one.
     */
    async recover(actor: StaffActor, id: string, since: Date | undefined): Promise<Recovery> {
      const endpoint = await mustGet(actor, id);
      if (endpoint.status !== "open")
        throw new AppError("conflict", "The webhook address is not open; enable it first.");
      return d.recoveries.start({
        propertyId: actor.propertyId,
        endpointId: id,
        userId: actor.userId,
        since,
        keyed: actor.keyed,
      });
    },

    /** Attempts of the last 30 days, newest first; `cursor` is the opaque value of the previous page. The address's recent recoveries come with it. */
    async history(
      actor: StaffActor,
      id: string,
      page: HistoryPage,
    ): Promise<{ deliveries: HistoryEntry[]; nextCursor: string | null; recoveries: Recovery[] }> {
      const filters = checkHistoryFilters(page);
      await mustGet(actor, id);
      const recoveries = await d.recoveries.recent(actor.propertyId, id);
      const limit = Math.min(Math.max(page.limit ?? 50, 1), 200);
      const after = page.cursor ? decodeCursor(page.cursor) : undefined;
      const since = new Date(d.clock.now().getTime() - historyDays * 24 * 60 * 60 * 1000);
      const rows = await repo.history(actor.propertyId, id, since, limit + 1, after, filters);
      const more = rows.length > limit;
      const deliveries = rows.slice(0, limit);
      const last = deliveries.at(-1);
      return { deliveries, recoveries, nextCursor: more && last ? encodeCursor(last) : null };
    },

    /** Sends the same event (same id) again at once, as a new delivery with a fresh delivery id. */
    async resend(actor: StaffActor, endpointId: string, deliveryId: string): Promise<{ deliveryId: string }> {
      const endpoint = await mustGet(actor, endpointId);
      if (endpoint.status !== "open")
        throw new AppError("conflict", "The webhook address is not open; enable it first.");
      const now = d.clock.now();
      const id = newId(now.getTime());
      return d.transact(async (tx) => {
        const created = await copyDelivery(tx, {
          id,
          propertyId: actor.propertyId,
          endpointId,
          deliveryId: isUuid(deliveryId) ? deliveryId : null,
          now,
        });
        if (!created) throw new AppError("not_found", "Delivery not found.");
        await tx.enqueue(queues.webhooksDeliver, { deliveryId: id });
        return { deliveryId: id };
      }, actor.keyed);
    },
  };
}
