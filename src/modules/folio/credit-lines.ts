import type { Tx } from "../../db/transaction.ts";
import { recordChange } from "../audit/index.ts";
import { newId } from "../../lib/ids.ts";
import { findFolio } from "./folio.repository.ts";
import { findCreditLine, insertCreditLine } from "./windows.repository.ts";

interface ReturnCreditInput {
  folioId: string;
  invoiceId: string;
  invoiceNumber: string;
  amountMinor: bigint;
  businessDate: string;
  postedAt: Date;
  postedBy: string;
}

/**
 * Inside the transaction that issues a return invoice (IADE): a CREDIT line of the returned total on the folio,
 * carrying the return invoice's id, so the folio's balance shows what the hotel gave back (a credit the guest is
 * refunded with RefundPayment, or that lowers what is still owed).
 */
export async function postReturnCredit(tx: Tx, propertyId: string, input: ReturnCreditInput): Promise<void> {
  if (input.amountMinor <= 0n) return;
  await write(
    tx,
    propertyId,
    "CREDIT",
    input.folioId,
    -input.amountMinor,
    input,
    `Return invoice ${input.invoiceNumber}`,
  );
}

/**
 * Inside the transaction that cancels a return invoice: the opposite of its CREDIT line (CREDIT_REVERSAL, positive,
 * the same invoice id), so the folio owes again what the return had credited. Nothing when it had no credit line.
 */
export async function reverseReturnCredit(
  tx: Tx,
  propertyId: string,
  input: Omit<ReturnCreditInput, "folioId" | "amountMinor">,
): Promise<void> {
  const credit = await findCreditLine(tx, propertyId, input.invoiceId);
  if (credit === undefined) return;
  await write(
    tx,
    propertyId,
    "CREDIT_REVERSAL",
    credit.folioId,
    -credit.amountMinor,
    input,
    `Return invoice ${input.invoiceNumber} cancelled`,
  );
}

async function write(
  tx: Tx,
  propertyId: string,
  kind: "CREDIT" | "CREDIT_REVERSAL",
  folioId: string,
  amountMinor: bigint,
  input: Pick<ReturnCreditInput, "invoiceId" | "businessDate" | "postedAt" | "postedBy">,
  description: string,
): Promise<void> {
  // locked: the balance changes with the line, as with every other posting
  await findFolio(tx, propertyId, folioId, true);
  const line = {
    id: newId(input.postedAt.getTime()),
    kind,
    code: kind === "CREDIT" ? "RETURN" : "RETURN_CANCELLED",
    folioId,
    description,
    amountMinor,
    businessDate: input.businessDate,
    invoiceId: input.invoiceId,
    postedAt: input.postedAt,
    postedBy: input.postedBy,
  };
  await insertCreditLine(tx, propertyId, line);
  recordChange(tx, { propertyId, entity: "folio", entityId: folioId, action: "credit", after: line });
}
