import { AppError, invalidField } from "../../errors.ts";
import { isUuid } from "../../lib/ids.ts";
import type { ItemRow } from "./ledger.repository.ts";

/**
 * How a payment of `amountMinor` is spread over the account's open debits (oldest first, as given): the caller's
 * allocations, each 1 to what is open on a debit of the account, together at most the payment; or, when it names
 * none, the oldest debits first until the payment is used up. What is not allocated stays open on the payment.
 */
export function allocationsFor(
  input: { amountMinor: bigint; allocations: readonly { itemId: string; amountMinor: bigint }[] },
  openDebits: readonly ItemRow[],
): { debitItemId: string; amountMinor: bigint }[] {
  const out: { debitItemId: string; amountMinor: bigint }[] = [];
  if (input.allocations.length === 0) {
    let left = input.amountMinor;
    for (const d of openDebits) {
      if (left === 0n) break;
      const take = d.openMinor < left ? d.openMinor : left;
      out.push({ debitItemId: d.id, amountMinor: take });
      left -= take;
    }
    return out;
  }
  const open = new Map(openDebits.map((d) => [d.id, d.openMinor]));
  let total = 0n;
  for (const [k, a] of input.allocations.entries()) {
    const field = `allocations[${k}]`;
    if (!isUuid(a.itemId)) throw invalidField(`${field}.itemId`, "must be a UUID");
    if (out.some((o) => o.debitItemId === a.itemId))
      throw invalidField(`${field}.itemId`, "is named twice", "validation_failed");
    const openMinor = open.get(a.itemId);
    if (openMinor === undefined)
      throw invalidField(`${field}.itemId`, "is not an open debit of the account", "validation_failed");
    if (a.amountMinor <= 0n || a.amountMinor > openMinor)
      throw invalidField(
        `${field}.amountMinor`,
        `must be 1 to ${openMinor} (what is open on the item)`,
        "validation_failed",
      );
    total += a.amountMinor;
    out.push({ debitItemId: a.itemId, amountMinor: a.amountMinor });
  }
  if (total > input.amountMinor)
    throw new AppError("validation_failed", "The allocations add up to more than the payment.", {
      details: [
        { field: "allocations", reason: `they add up to ${total}, beyond the payment of ${input.amountMinor}` },
      ],
    });
  return out;
}
