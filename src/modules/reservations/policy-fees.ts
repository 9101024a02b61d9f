import type { Tx } from "../../db/transaction.ts";
import type { Reservation, RoomLine } from "./reservation.repository.ts";

/** A fee the reservations module asks the folio to post (FolioService.postFee in the composition root). */
interface FeeCharge {
  reservationId: string;
  /** CANCELLATION_FEE, NO_SHOW_FEE or LATE_CHECKOUT_FEE. */
  code: string;
  description: string;
  amountMinor: bigint;
  by: string;
}
export type PostFee = (tx: Tx, propertyId: string, fee: FeeCharge) => Promise<void>;

/**
 * What a room line's rate plan policy charges: the first night, basis points of the line's total (rounded down) or a
 * fixed amount, never more than the line's total; 0 without a policy.
 */
export function lineFee(l: RoomLine): bigint {
  const p = l.policy;
  if (p === null) return 0n;
  const fee =
    p.feeKind === "FIRST_NIGHT"
      ? (l.nightlyMinor[0] ?? 0n)
      : p.feeKind === "PERCENT"
        ? (l.totalMinor * p.feeValue) / 10_000n
        : p.feeValue;
  return fee < l.totalMinor ? fee : l.totalMinor;
}

/** The fee of cancelling at `now`: the lines whose free window has passed (now after their `freeUntil`). */
function cancellationFee(r: Reservation, now: Date): bigint {
  let fee = 0n;
  for (const l of r.rooms) if (l.policy !== null && now.getTime() > l.policy.freeUntil.getTime()) fee += lineFee(l);
  return fee;
}

/** The fee of a no-show: every line's policy fee. */
function noShowFee(r: Reservation): bigint {
  return r.rooms.reduce((sum, l) => sum + lineFee(l), 0n);
}

/** Posts a cancellation fee when the reservation is cancelled inside its fee window (before the guest came). */
export async function postCancellationFee(
  tx: Tx,
  postFee: PostFee | undefined,
  before: Reservation,
  now: Date,
  by: string,
): Promise<void> {
  if (postFee === undefined || (before.status !== "TENTATIVE" && before.status !== "GUARANTEED")) return;
  const amountMinor = cancellationFee(before, now);
  if (amountMinor === 0n) return;
  await postFee(tx, before.propertyId, {
    reservationId: before.id,
    code: "CANCELLATION_FEE",
    description: `Cancellation fee, reservation ${before.code}`,
    amountMinor,
    by,
  });
}

/** Posts the no-show fee of the reservation's rate plan policies. */
export async function postNoShowFee(tx: Tx, postFee: PostFee | undefined, r: Reservation, by: string): Promise<void> {
  const amountMinor = postFee === undefined ? 0n : noShowFee(r);
  if (amountMinor === 0n) return;
  await postFee!(tx, r.propertyId, {
    reservationId: r.id,
    code: "NO_SHOW_FEE",
    description: `No-show fee, reservation ${r.code}`,
    amountMinor,
    by,
  });
}
