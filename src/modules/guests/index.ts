import { GuestService } from "../../../gen/hotelops/guest/v1/guest_pb.js";
import { queues } from "../../jobs/queues.ts";
import type { Deps, Module } from "../module.ts";
import type { LineGuests } from "../reservations/index.ts";
import { createGuestRpc, guestOut } from "./guests.rpc.ts";
import { createGuestService, type GuestService as GuestDomain } from "./guests.service.ts";
import { loadGuestVault } from "./vault.ts";
import { createFileSender, createHttpsSender, type GuestReportSender } from "./report-senders.ts";
import type { GuestReportsConfig } from "../../config.ts";
import type { Queryable } from "../../db/queryable.ts";

export type { GuestService } from "./guests.service.ts";
export { guestOut } from "./guests.rpc.ts";
export type { ScannedPerson } from "./stays.service.ts";

/** The guests of reservation room lines for the reservation reads (wired into the reservations module by app.ts). */
export function lineGuestsReader(guests: GuestDomain): LineGuests {
  return async (propertyId, lineIds, reveal) => {
    const found = await guests.guestsOfLines(await guests.scopeOf(propertyId), lineIds, reveal);
    return new Map([...found].map(([line, list]) => [line, list.map(guestOut)]));
  };
}

/** The counts of the guest reporting issues of a property (the dashboard's and the night audit's). */
export function guestReportingCounts(guests: GuestDomain) {
  return async (propertyId: string, q?: Queryable): Promise<{ unreported: number; failed: number }> => {
    const found = await guests.reporting.issues(propertyId, q);
    return { unreported: found.unreported.length, failed: found.failed };
  };
}

/** Builds the guest service once (app.ts): the vault's keys come from the configuration. */
export function createGuests(deps: Pick<Deps, "config" | "db" | "transact" | "clock">): GuestDomain {
  return createGuestService({
    transact: deps.transact,
    pool: deps.db.pool,
    clock: deps.clock,
    vault: loadGuestVault(deps.config),
    reportRetentionYears: deps.config.guestReports.retentionYears,
  });
}

/** The sender of the configuration (KBS_SENDER); undefined for `none` (the reports wait, listed as unreported). */
function senderOf(c: GuestReportsConfig): GuestReportSender | undefined {
  if (c.sender === "https")
    return createHttpsSender({
      endpoint: c.endpoint ?? "",
      username: c.username,
      password: c.password,
      token: c.token,
      timeoutMs: c.timeoutMs,
    });
  if (c.sender === "file") return createFileSender(c.fileDir);
  return undefined;
}

/**
 * Guest profiles: GuestService (gRPC, Connect, the /api/panel/v1/guests REST routes), the daily retention job
 * (profiles past GUEST_RETENTION_YEARS anonymised, guest reports past GUEST_REPORT_RETENTION_YEARS deleted) and the
 * guest reporting worker (KBS_SENDER).
 */
export function createGuestsModule(
  deps: Pick<Deps, "db" | "boss" | "config" | "logger" | "metrics">,
  guests: GuestDomain,
): Module {
  const rpc = createGuestRpc(guests);
  return {
    name: "guests",
    services: [GuestService],
    registerRpc: (router) => rpc.register(router),
    async startWorkers() {
      await deps.boss.registerWorker(queues.guestRetention, async () => {
        let erased = 0;
        const byProperty = new Map<string, number>();
        // batches of 500, each its own transaction; a bound keeps one run short (the next day's run goes on)
        for (let i = 0; i < 100; i++) {
          const n = await guests.erasePastRetention(deps.config.guestRetentionYears, 500, byProperty);
          erased += n;
          if (n < 500) break;
        }
        const reportsDeleted = await guests.reporting.purgePastRetention();
        await guests.recordRetentionRun({
          years: deps.config.guestRetentionYears,
          anonymised: byProperty,
          reportsDeleted,
        });
        if (erased > 0 || reportsDeleted > 0) deps.logger.info({ erased, reportsDeleted }, "guest retention");
        return { erased, reportsDeleted };
      });
      const reports = deps.config.guestReports;
      const sender = senderOf(reports);
      if (sender !== undefined)
        await deps.boss.registerWorker<{ reportId: string }>(
          queues.guestReporting,
          async (job) => {
            try {
              const outcome = await guests.reporting.attempt(sender, job.data.reportId, reports.retryLimit);
              if (outcome !== "skipped") deps.metrics?.guestReportAttempt(sender.kind, outcome);
            } catch (err) {
              deps.metrics?.guestReportAttempt(sender.kind, "retried");
              // the report id only: the notification carries personal data
              deps.logger.warn(
                { reportId: job.data.reportId, error: err instanceof Error ? err.message : "error" },
                "guest report not delivered; retried",
              );
              throw err;
            }
          },
          {
            pollingIntervalSeconds: 2,
            notifyPollingIntervalSeconds: 2,
            queue: {
              retryLimit: reports.retryLimit,
              retryDelay: reports.retryDelaySeconds,
              retryBackoff: true,
              retryDelayMax: reports.retryDelayMaxSeconds,
            },
          },
        );
      await deps.boss.pgboss.schedule(queues.guestRetention, "41 3 * * *");
      await deps.boss.pgboss.send(queues.guestRetention, {});
    },
  };
}
