import { recordChange } from "../audit/index.ts";
import type { Tx } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import { checkMoneyBound } from "../../lib/money.ts";
import * as repo from "./inventory.repository.ts";
import {
  depositDueAnchors,
  policyFeeKinds,
  type RatePlan,
  type RatePlanDeposit,
  type RatePlanPolicy,
} from "./inventory.repository.ts";

/** The longest free window a policy may give: a leap year of hours. */
const maxPolicyFreeHours = 8784;

/** 422 naming the field when a policy is not whole or out of range. */
export function checkRatePlanPolicy(p: RatePlanPolicy): void {
  if (!Number.isInteger(p.freeHours) || p.freeHours < 0 || p.freeHours > maxPolicyFreeHours)
    throw invalidField("policy.freeUntilHours", `0 to ${maxPolicyFreeHours} hours before arrival`, "validation_failed");
  if (!policyFeeKinds.includes(p.feeKind))
    throw invalidField("policy.feeKind", `one of ${policyFeeKinds.join(", ")}`, "validation_failed");
  if (p.feeKind === "FIRST_NIGHT" && p.feeValue !== 0n)
    throw invalidField(
      "policy.feeValue",
      "0 for FIRST_NIGHT (the fee is the first night's price)",
      "validation_failed",
    );
  if (p.feeKind === "PERCENT" && (p.feeValue < 1n || p.feeValue > 10_000n))
    throw invalidField("policy.feeValue", "1 to 10000 basis points of the stay total", "validation_failed");
  if (p.feeKind === "FIXED") {
    if (p.feeValue < 1n) throw invalidField("policy.feeValue", "1 or more minor units", "validation_failed");
    checkMoneyBound("policy.feeValue", p.feeValue, "validation_failed");
  }
}

/** The one write of SetRatePlanPolicy, in the caller's transaction. */
export async function writeRatePlanPolicy(
  tx: Tx,
  propertyId: string,
  ratePlanId: string,
  policy: RatePlanPolicy | null,
): Promise<RatePlan> {
  const before = await repo.findRatePlan(tx, propertyId, ratePlanId);
  if (before === undefined) throw new AppError("not_found", "Rate plan not found.");
  await repo.updateRatePlanPolicy(tx, propertyId, ratePlanId, policy);
  const after = (await repo.findRatePlan(tx, propertyId, ratePlanId))!;
  recordChange(tx, { propertyId, entity: "rate_plan", entityId: ratePlanId, action: "policy", before, after });
  return after;
}

/** 422 naming the field when a deposit rule is not whole or out of range. */
export function checkRatePlanDeposit(d: RatePlanDeposit): void {
  if (!policyFeeKinds.includes(d.kind))
    throw invalidField("deposit.kind", `one of ${policyFeeKinds.join(", ")}`, "validation_failed");
  if (d.kind === "FIRST_NIGHT" && d.value !== 0n)
    throw invalidField(
      "deposit.value",
      "0 for FIRST_NIGHT (the deposit is the first night's price)",
      "validation_failed",
    );
  if (d.kind === "PERCENT" && (d.value < 1n || d.value > 10_000n))
    throw invalidField("deposit.value", "1 to 10000 basis points of the line's total", "validation_failed");
  if (d.kind === "FIXED") {
    if (d.value < 1n) throw invalidField("deposit.value", "1 or more minor units", "validation_failed");
    checkMoneyBound("deposit.value", d.value, "validation_failed");
  }
  if (!depositDueAnchors.includes(d.dueAnchor))
    throw invalidField("deposit.dueAnchor", `one of ${depositDueAnchors.join(", ")}`, "validation_failed");
  if (!Number.isInteger(d.dueDays) || d.dueDays < 0 || d.dueDays > 365)
    throw invalidField("deposit.dueDays", "0 to 365 days", "validation_failed");
}

/** The one write of SetRatePlanDeposit, in the caller's transaction. */
export async function writeRatePlanDeposit(
  tx: Tx,
  propertyId: string,
  ratePlanId: string,
  deposit: RatePlanDeposit | null,
): Promise<RatePlan> {
  const before = await repo.findRatePlan(tx, propertyId, ratePlanId);
  if (before === undefined) throw new AppError("not_found", "Rate plan not found.");
  await repo.updateRatePlanDeposit(tx, propertyId, ratePlanId, deposit);
  const after = (await repo.findRatePlan(tx, propertyId, ratePlanId))!;
  recordChange(tx, { propertyId, entity: "rate_plan", entityId: ratePlanId, action: "deposit", before, after });
  return after;
}
