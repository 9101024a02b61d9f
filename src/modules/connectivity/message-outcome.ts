import type { Tx } from "../../db/transaction.ts";
import type { ErrorCode } from "../../errors.ts";
import { recordPartnerEvents } from "../events/index.ts";
import type { Outcome, QueuedRow } from "./message-processor.ts";

/**
 * Why a partner message was rejected: the service's error code (e.g. `sold_out`, `validation_failed`), or
 * `unknown_reservation` (a change or cancellation of a booking we do not have), `unmapped_code` (a room type or
 * rate plan code without a mapping for the provider), `rooms_changed` (a modification that adds or removes rooms).
 */
export type RejectionCode = ErrorCode | "unknown_reservation" | "unmapped_code" | "rooms_changed";

/**
 * The partner_message.processed / .rejected event of one outcome, for the callbacks of the client that sent the
 * message, written in the outcome's own transaction (the partner is told if and only if the outcome committed).
 */
export async function recordOutcomeEvent(
  tx: Tx,
  clientId: string,
  row: QueuedRow,
  outcome: Outcome,
  at: Date,
): Promise<void> {
  const e = row.payload;
  const message = {
    messageId: row.id,
    messageType: e.eventType,
    externalReference: e.externalReference,
    channel: e.channel === "" ? null : e.channel,
  };
  await recordPartnerEvents(tx, [
    outcome.status === "PROCESSED"
      ? {
          clientId,
          propertyId: row.property_id,
          type: "partner_message.processed",
          occurredAt: at,
          data: {
            ...message,
            status: "PROCESSED",
            reservationId: outcome.reservationId,
            reservationCode: outcome.reservationCode,
          },
        }
      : {
          clientId,
          propertyId: row.property_id,
          type: "partner_message.rejected",
          occurredAt: at,
          data: { ...message, status: "REJECTED", reason: { code: outcome.code, text: outcome.error } },
        },
  ]);
}
