import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { addDays, daysBetween, parseDate } from "../../lib/dates.ts";
import { poolQueryable, type Queryable } from "../../db/queryable.ts";
import { propertyById } from "../properties/index.ts";
import { reports, type ReportColumn, type ReportDefinition } from "./catalogue.ts";
import { occupancyDays } from "./stats.service.ts";
import { insertReportRun } from "./reports.repository.ts";

/** Spec limits: at most 366 days per run, at most 60 preview rows. */
const MAX_REPORT_DAYS = 366;
const PREVIEW_ROWS = 60;

type ReportValue = string | number;

interface ReportRun {
  runId: string;
  name: string;
  rowCount: number;
  columns: (ReportColumn & { currency?: string; amountScale?: number })[];
  rows: ReportValue[][];
  truncated: boolean;
}

interface RunReportInput {
  reportId: string;
  start: string;
  end: string;
}

export interface ReportsService {
  catalogue(): readonly ReportDefinition[];
  /** Runs a report at the property for `start..end` (both included) and records the run under the staff member. */
  run(propertyId: string, ranBy: { userId: string; sessionId: string }, input: RunReportInput): Promise<ReportRun>;
}

/** Money leaves as a JSON number: exact up to 2^53 - 1 minor units, beyond that the report refuses to round. */
function cell(column: ReportColumn, value: unknown): ReportValue {
  if (column.type === "date" || column.type === "text") return String(value ?? "");
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new AppError("internal", `Report value of ${column.key} is out of the exact number range.`);
  return n;
}

function parseInput(input: RunReportInput): ReportDefinition & { start: string; end: string } {
  const report = reports.find((r) => r.id === input.reportId);
  if (report === undefined)
    throw invalidField("reportId", `unknown report; one of ${reports.map((r) => r.id).join(", ")}`);
  const start = parseDate("start", input.start);
  const end = parseDate("end", input.end);
  if (end < start) throw invalidField("end", "must not be before start");
  if (daysBetween(start, end) + 1 > MAX_REPORT_DAYS)
    throw invalidField("end", `at most ${MAX_REPORT_DAYS} days from start, both included`);
  return { ...report, start, end };
}

/**
 * `replicaReads`: where a report's rows are read, the replica while it is within REPLICA_MAX_LAG_MS of the primary
 * (a report over business days may be that old), else the primary. The run's record is written on the primary.
 */
export function createReportsService(deps: { pool: pg.Pool; clock: Clock; replicaReads?: Queryable }): ReportsService {
  const primary = poolQueryable(deps.pool);
  const reads = deps.replicaReads ?? primary;

  /** The preview rows (key -> value) and the count of all rows. */
  async function select(
    report: ReportDefinition,
    propertyId: string,
    start: string,
    end: string,
  ): Promise<{ rows: Record<string, unknown>[]; total: number }> {
    if (report.rows === "occupancy") {
      const days = await occupancyDays(reads, propertyId, start, addDays(end, 1), false);
      return { rows: days.slice(0, PREVIEW_ROWS) as unknown as Record<string, unknown>[], total: days.length };
    }
    const rows = await report.rows(reads, propertyId, start, end, PREVIEW_ROWS);
    return { rows, total: rows.length === 0 ? 0 : Number(rows[0]!.total) };
  }

  return {
    catalogue: () => reports,

    async run(propertyId, ranBy, input) {
      const report = parseInput(input);
      const [property, { rows, total }] = await Promise.all([
        propertyById(primary, propertyId),
        select(report, propertyId, report.start, report.end),
      ]);
      const runId = newId();
      const truncated = total > rows.length;
      await insertReportRun(primary, {
        id: runId,
        propertyId,
        reportId: report.id,
        start: report.start,
        end: report.end,
        userId: ranBy.userId,
        sessionId: ranBy.sessionId,
        rowCount: total,
        truncated,
        createdAt: deps.clock.now(),
      });
      return {
        runId,
        name: report.name,
        rowCount: total,
        columns: report.columns.map((c) =>
          c.type === "money" ? { ...c, currency: property.currency, amountScale: property.amountScale } : { ...c },
        ),
        rows: rows.map((row) => report.columns.map((c) => cell(c, row[c.key]))),
        truncated,
      };
    },
  };
}
