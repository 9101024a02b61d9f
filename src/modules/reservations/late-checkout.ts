import { recordChange } from "../audit/index.ts";
import type { Queryable } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";
import { invalidField } from "../../errors.ts";
import { checkMoneyBound } from "../../lib/money.ts";
import { propertyFieldSql } from "../properties/index.ts";
import type { PostFee } from "./policy-fees.ts";
import type { Reservation, RoomLine } from "./reservation.repository.ts";

/** A property's late check-out rule: after `afterHour`:00 hotel time on the departure date, a fee per room line. */
export interface LateCheckOutRule {
  afterHour: number;
  feeKind: "FIXED" | "PERCENT";
  /** FIXED: minor units; PERCENT: basis points of one night (the line's last night). */
  feeValue: bigint;
}

/** 422 naming the field when a rule is out of range. */
export function checkLateCheckOutRule(rule: LateCheckOutRule): void {
  if (!Number.isInteger(rule.afterHour) || rule.afterHour < 0 || rule.afterHour > 23)
    throw invalidField("rule.afterHour", "0 to 23 (hotel time)", "validation_failed");
  if (rule.feeKind !== "FIXED" && rule.feeKind !== "PERCENT")
    throw invalidField("rule.feeKind", "FIXED or PERCENT", "validation_failed");
  if (rule.feeKind === "PERCENT" && (rule.feeValue < 1n || rule.feeValue > 10_000n))
    throw invalidField("rule.feeValue", "1 to 10000 basis points of one night", "validation_failed");
  if (rule.feeKind === "FIXED") {
    if (rule.feeValue < 1n) throw invalidField("rule.feeValue", "1 or more minor units", "validation_failed");
    checkMoneyBound("rule.feeValue", rule.feeValue, "validation_failed");
  }
}

/** The one write of SetLateCheckOutRule (null removes the rule). */
export async function writeLateCheckOutRule(
  tx: Tx,
  propertyId: string,
  rule: LateCheckOutRule | null,
  now: Date,
): Promise<void> {
  const change = {
    propertyId,
    entity: "late_checkout_rule" as const,
    entityId: propertyId,
    action: rule === null ? "delete" : "set",
  };
  if (rule === null) {
    await tx.query("delete from late_checkout_rules where property_id = $1", [propertyId]);
    recordChange(tx, change);
    return;
  }
  recordChange(tx, { ...change, after: rule });
  await tx.query(
    `insert into late_checkout_rules (property_id, after_hour, fee_kind, fee_value, updated_at) values ($1, $2, $3, $4::bigint, $5)
     on conflict (property_id) do update set after_hour = $2, fee_kind = $3, fee_value = $4::bigint, updated_at = $5`,
    [propertyId, rule.afterHour, rule.feeKind, rule.feeValue.toString(), now],
  );
}

/** The property's rule and whether `at` is past its hour in the hotel's time zone; undefined without a rule. */
async function lateCheckOutRule(
  q: Queryable,
  propertyId: string,
  at: Date,
): Promise<(LateCheckOutRule & { late: boolean }) | undefined> {
  const [row] = await q.query<{ afterHour: number; feeKind: "FIXED" | "PERCENT"; feeValue: string; late: boolean }>(
    `select after_hour as "afterHour", fee_kind as "feeKind", fee_value::text as "feeValue",
            ($2::timestamptz at time zone ${propertyFieldSql("timeZone", "$1")})::time > make_time(after_hour, 0, 0) as late
       from late_checkout_rules where property_id = $1`,
    [propertyId, at],
  );
  return row === undefined ? undefined : { ...row, feeValue: BigInt(row.feeValue) };
}

/**
 * Posts LATE_CHECKOUT_FEE for a room line checked out on the departure date after the rule's hour. An early
 * check-out (a day use included: the departure moves to the arrival date) and a check-out after the departure date
 * (its extra nights are taken and charged as nights) post no fee.
 */
export async function postLateCheckOutFee(
  tx: Tx,
  postFee: PostFee | undefined,
  r: Reservation,
  line: RoomLine,
  businessDate: string,
  now: Date,
  by: string,
): Promise<void> {
  if (postFee === undefined || businessDate !== r.departureDate) return;
  const rule = await lateCheckOutRule(tx, r.propertyId, now);
  if (rule === undefined || !rule.late) return;
  const night = line.nightlyMinor.at(-1) ?? 0n;
  const amountMinor = rule.feeKind === "FIXED" ? rule.feeValue : (night * rule.feeValue) / 10_000n;
  if (amountMinor <= 0n) return;
  await postFee(tx, r.propertyId, {
    reservationId: r.id,
    code: "LATE_CHECKOUT_FEE",
    description: `Late check-out after ${String(rule.afterHour).padStart(2, "0")}:00, reservation ${r.code}`,
    amountMinor,
    by,
  });
}
