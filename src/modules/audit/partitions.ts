import type { Transact } from "../../db/transaction.ts";

/** Months kept: a change stays at least this many whole months (its partition goes once all of it is older). */
const RETENTION_MONTHS = 12;
/** Months created ahead of the current one, so a late job never leaves a change without its partition. */
const MONTHS_AHEAD = 3;

const partitionName = /^audit_changes_y(\d{4})m(\d{2})$/;

/** The first instant (UTC) of the month `offset` months from `at`'s. */
function monthStart(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

function nameOf(month: Date): string {
  return `audit_changes_y${month.getUTCFullYear()}m${String(month.getUTCMonth() + 1).padStart(2, "0")}`;
}

export interface PartitionRun {
  created: string[];
  dropped: string[];
  /** Rows moved from the default partition into a month created for them. */
  moved: number;
}

/**
 * Keeps the monthly partitions of `audit_changes` around `now`: creates this month and the next MONTHS_AHEAD ones
 * (moving into a new month the rows the default partition caught for it), and drops every month that ended more
 * than RETENTION_MONTHS months before this one began, with the default partition's rows that old: the purge is a
 * partition drop, not a DELETE over a year of rows. One transaction under an advisory lock (workers may run it at
 * the same moment); a crash leaves the partitions as they were.
 */
export async function maintainAuditPartitions(transact: Transact, now: Date): Promise<PartitionRun> {
  return transact(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('audit.partitions'))");
    const existing = (
      await tx.query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = 'audit_changes'::regclass`,
      )
    ).map((r) => r.name);
    const run: PartitionRun = { created: [], dropped: [], moved: 0 };
    for (let i = 0; i <= MONTHS_AHEAD; i++) {
      const from = monthStart(now, i);
      const to = monthStart(now, i + 1);
      const name = nameOf(from);
      if (existing.includes(name)) continue;
      // Attaching checks that the default partition holds no row of the month: move them first.
      await tx.query(`create table ${name} (like audit_changes including defaults)`);
      const moved = await tx.query(
        `with gone as (delete from audit_changes_default where at >= $1 and at < $2 returning *)
         insert into ${name} select * from gone returning 1`,
        [from, to],
      );
      await tx.query(
        `alter table audit_changes attach partition ${name} for values from ('${from.toISOString()}') to ('${to.toISOString()}')`,
      );
      run.created.push(name);
      run.moved += moved.length;
    }
    const keepFrom = monthStart(now, -RETENTION_MONTHS);
    for (const name of existing) {
      const m = partitionName.exec(name);
      if (m === null) continue;
      const end = new Date(Date.UTC(Number(m[1]), Number(m[2]), 1));
      if (end > keepFrom) continue;
      await tx.query(`drop table ${name}`);
      run.dropped.push(name);
    }
    await tx.query("delete from audit_changes_default where at < $1", [keepFrom]);
    return run;
  });
}

/** The monthly partitions present, oldest first (operations and tests). */
export async function auditPartitions(transact: Transact): Promise<string[]> {
  return transact(async (tx) =>
    (
      await tx.query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = 'audit_changes'::regclass and c.relname <> 'audit_changes_default' order by 1`,
      )
    ).map((r) => r.name),
  );
}
