import type pg from "pg";
import type { Transact } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** How far back a recovery may reach (the delivery history's 30 days). */
const recoveryWindowMs = 30 * 24 * 60 * 60 * 1000;
const chunk = 5_000;

export interface Recovery {
  id: string;
  endpointId: string;
  since: Date;
  status: "running" | "done";
  /** Events to re-send; null until the background job has listed them. */
  eventsTotal: number | null;
  succeeded: number;
  failed: number;
  pending: number;
  createdAt: Date;
  finishedAt: Date | null;
}

interface RecoveryRow {
  id: string;
  endpoint_id: string;
  since: Date;
  status: "running" | "done";
  events_total: number | null;
  created_at: Date;
  finished_at: Date | null;
  succeeded: number;
  failed: number;
  pending: number;
}

/**
 * A recovery re-sends, to one address, every event whose delivery to it failed for good or was stopped by the
 * address closing, since a given time: new deliveries with the same event ids, paced by the address's throttle.
 * A job lists the events in chunks (a rerun adds nothing twice); progress is counted from its deliveries.
 */
export function createRecoveries(d: { pool: pg.Pool; transact: Transact; clock: Clock; wake: () => void }) {
  const progressSql = `select r.id, r.endpoint_id, r.since, r.status, r.events_total, r.created_at, r.finished_at,
      count(dl.id) filter (where dl.status = 'succeeded')::int as succeeded,
      count(dl.id) filter (where dl.status in ('failed', 'cancelled'))::int as failed,
      count(dl.id) filter (where dl.status = 'pending')::int as pending
    from webhook_recoveries r left join webhook_deliveries dl on dl.recovery_id = r.id`;

  function toRecovery(r: RecoveryRow): Recovery {
    return {
      id: r.id,
      endpointId: r.endpoint_id,
      since: r.since,
      status: r.status,
      eventsTotal: r.events_total,
      succeeded: r.succeeded,
      failed: r.failed,
      pending: r.pending,
      createdAt: r.created_at,
      finishedAt: r.finished_at,
    };
  }

  /** Marks an address's running recovery done once it is listed and nothing of it is pending. */
  async function settle(endpointId: string): Promise<void> {
    await d.pool.query(
      `update webhook_recoveries r set status = 'done', finished_at = $2 where r.endpoint_id = $1 and r.status = 'running' and r.events_total is not null
         and not exists (select 1 from webhook_deliveries dl where dl.recovery_id = r.id and dl.status = 'pending')`,
      [endpointId, d.clock.now()],
    );
  }

  return {
    /** Starts a recovery, or answers the one already running for the address (asking twice is harmless). */
    async start(input: {
      propertyId: string;
      endpointId: string;
      userId: string;
      since: Date | undefined;
      /** The handle of a keyed call: the recovery's row commits with its stored outcome. */
      keyed?: Keyed | undefined;
    }): Promise<Recovery> {
      const now = d.clock.now();
      if (input.since === undefined || Number.isNaN(input.since.getTime()))
        throw invalidField("since", "required: the time from which failed deliveries are sent again");
      if (input.since.getTime() < now.getTime() - recoveryWindowMs) throw invalidField("since", "at most 30 days back");
      if (input.since > now) throw invalidField("since", "must not be in the future");
      await settle(input.endpointId);
      const id = await d.transact(async (tx) => {
        const [created] = await tx.query<{ id: string }>(
          `insert into webhook_recoveries (id, property_id, endpoint_id, since, status, created_by, created_at)
           values ($1, $2, $3, $4, 'running', $5, $6) on conflict (endpoint_id) where status = 'running' do nothing returning id`,
          [newId(now.getTime()), input.propertyId, input.endpointId, input.since, input.userId, now],
        );
        if (created === undefined) {
          const [running] = await tx.query<{ id: string }>(
            "select id from webhook_recoveries where endpoint_id = $1 and status = 'running'",
            [input.endpointId],
          );
          if (running === undefined)
            throw new AppError("conflict", "A recovery of this address just finished; ask again.");
          return running.id;
        }
        await tx.enqueue(queues.webhooksRecover, { recoveryId: created.id });
        return created.id;
      }, input.keyed);
      return (await this.get(input.propertyId, id))!;
    },

    async get(propertyId: string, id: string): Promise<Recovery | undefined> {
      const { rows } = await d.pool.query<RecoveryRow>(
        `${progressSql} where r.property_id = $1 and r.id = $2 group by r.id`,
        [propertyId, id],
      );
      return rows[0] === undefined ? undefined : toRecovery(rows[0]);
    },

    /** The address's recent recoveries with their progress, newest first (shown with the delivery history). */
    async recent(propertyId: string, endpointId: string, limit = 5): Promise<Recovery[]> {
      await settle(endpointId);
      const { rows } = await d.pool.query<RecoveryRow>(
        `${progressSql} where r.property_id = $1 and r.endpoint_id = $2 group by r.id order by r.created_at desc, r.id desc limit $3`,
        [propertyId, endpointId, limit],
      );
      return rows.map(toRecovery);
    },

    /**
     * The job: lists the events to re-send in chunks and creates their deliveries (due now, in event order),
     * then records the total and wakes the dispatcher. Rerunning after a crash adds nothing twice.
     */
    async fill(recoveryId: string): Promise<number> {
      const { rows } = await d.pool.query<{
        endpoint_id: string;
        property_id: string;
        since: Date;
        created_at: Date;
        status: string;
      }>("select endpoint_id, property_id, since, created_at, status from webhook_recoveries where id = $1", [
        recoveryId,
      ]);
      const r = rows[0];
      if (r === undefined || r.status !== "running") return 0;
      let after = "00000000-0000-0000-0000-000000000000";
      for (;;) {
        const { rows: events } = await d.pool.query<{ event_id: string; event_type: string }>(
          `select distinct dl.event_id, dl.event_type from webhook_deliveries dl
           where dl.endpoint_id = $1 and dl.event_id > $3 and not dl.is_test and dl.recovery_id is distinct from $5
             and (dl.status = 'failed' or (dl.status = 'cancelled' and dl.last_error_class = 'endpoint_closed'))
             and coalesce(dl.last_attempt_at, dl.created_at) >= $2
             and not exists (select 1 from webhook_deliveries ok where ok.endpoint_id = dl.endpoint_id and ok.event_id = dl.event_id and ok.status in ('succeeded', 'pending'))
           order by dl.event_id limit $4`,
          [r.endpoint_id, r.since, after, chunk, recoveryId],
        );
        if (events.length === 0) break;
        const now = d.clock.now();
        // Event ids are time-ordered: due times a microsecond apart keep that order through the dispatcher.
        await d.pool.query(
          `insert into webhook_deliveries (id, property_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, recovery_id)
           select u.id, $1, $2, u.event_id, u.event_type, 'pending', 0, $3::timestamptz + u.n * interval '1 microsecond', $3, $4
           from unnest($5::uuid[], $6::uuid[], $7::text[]) with ordinality as u(id, event_id, event_type, n)
           on conflict (recovery_id, event_id) where recovery_id is not null do nothing`,
          [
            r.property_id,
            r.endpoint_id,
            now,
            recoveryId,
            events.map(() => newId(now.getTime())),
            events.map((e) => e.event_id),
            events.map((e) => e.event_type),
          ],
        );
        d.wake();
        after = events.at(-1)!.event_id;
      }
      const { rows: total } = await d.pool.query<{ n: number }>(
        "update webhook_recoveries set events_total = (select count(*) from webhook_deliveries where recovery_id = $1) where id = $1 returning events_total as n",
        [recoveryId],
      );
      await settle(r.endpoint_id);
      return total[0]?.n ?? 0;
    },
  };
}
export type Recoveries = ReturnType<typeof createRecoveries>;
