import { addDays } from "../../lib/dates.ts";
import type { RatePlanDeposit } from "../inventory/index.ts";

/** What one room line owes as a deposit: the first night, basis points of its total or a fixed amount, capped. */
function lineDeposit(d: RatePlanDeposit, nightlyMinor: readonly bigint[], totalMinor: bigint): bigint {
  const due =
    d.kind === "FIRST_NIGHT"
      ? (nightlyMinor[0] ?? 0n)
      : d.kind === "PERCENT"
        ? (totalMinor * d.value) / 10_000n
        : d.value;
  return due < totalMinor ? due : totalMinor;
}

/**
 * The deposit a new reservation owes: the sum of its lines' deposits, due on the earliest of their due dates (each
 * between the booking's business date and the arrival date). `{ dueMinor: 0n, dueDate: null }` when none is asked.
 */
export function depositOfBooking(
  lines: readonly { deposit: RatePlanDeposit | null; nightlyMinor: readonly bigint[]; totalMinor: bigint }[],
  businessDate: string,
  arrival: string,
): { dueMinor: bigint; dueDate: string | null } {
  let dueMinor = 0n;
  let dueDate: string | null = null;
  for (const l of lines) {
    if (l.deposit === null) continue;
    const amount = lineDeposit(l.deposit, l.nightlyMinor, l.totalMinor);
    if (amount === 0n) continue;
    const raw =
      l.deposit.dueAnchor === "AFTER_BOOKING"
        ? addDays(businessDate, l.deposit.dueDays)
        : addDays(arrival, -l.deposit.dueDays);
    const date = raw > arrival ? arrival : raw < businessDate ? businessDate : raw;
    dueMinor += amount;
    if (dueDate === null || date < dueDate) dueDate = date;
  }
  return { dueMinor, dueDate };
}
