import type { Tx } from "../../db/transaction.ts";

/** Persistence of e-document deliveries and of the lines return invoices return. Every query filters by property id. */

type DeliveryStatus = "QUEUED" | "SENT" | "ACCEPTED" | "REJECTED" | "CANCELLING" | "CANCELLED";

export interface Delivery {
  invoiceId: string;
  propertyId: string;
  ettn: string;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  reason: string | null;
  queuedAt: Date;
  sentAt: Date | null;
  decidedAt: Date | null;
}

type Raw = Record<string, unknown>;

const columns = `invoice_id::text, property_id::text, ettn::text, status, attempts, last_error, reason, queued_at, sent_at, decided_at`;

function toDelivery(r: Raw): Delivery {
  return {
    invoiceId: r.invoice_id as string,
    propertyId: r.property_id as string,
    ettn: r.ettn as string,
    status: r.status as DeliveryStatus,
    attempts: r.attempts as number,
    lastError: (r.last_error as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    queuedAt: r.queued_at as Date,
    sentAt: (r.sent_at as Date | null) ?? null,
    decidedAt: (r.decided_at as Date | null) ?? null,
  };
}

export async function insertDelivery(tx: Tx, propertyId: string, invoiceId: string, ettn: string, at: Date) {
  await tx.query(
    `insert into invoice_deliveries (invoice_id, property_id, ettn, status, queued_at, updated_at) values ($1, $2, $3, 'QUEUED', $4, $4)`,
    [invoiceId, propertyId, ettn, at],
  );
}

export async function findDelivery(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  lock = false,
): Promise<Delivery | undefined> {
  const [r] = await tx.query<Raw>(
    `select ${columns} from invoice_deliveries where property_id = $1 and invoice_id = $2 ${lock ? "for update" : ""}`,
    [propertyId, invoiceId],
  );
  return r === undefined ? undefined : toDelivery(r);
}

export interface DeliveryChange {
  status?: DeliveryStatus;
  attempts?: number;
  lastError?: string | null;
  reason?: string | null;
  sentAt?: Date;
  decidedAt?: Date | null;
}

/** Writes the given fields (the rest keep their values) and returns the row after. */
export async function updateDelivery(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  c: DeliveryChange,
  at: Date,
): Promise<Delivery> {
  const [r] = await tx.query<Raw>(
    `update invoice_deliveries set
       status = coalesce($3, status),
       attempts = coalesce($4, attempts),
       last_error = case when $5 then $6 else last_error end,
       reason = case when $7 then $8 else reason end,
       sent_at = coalesce($9, sent_at),
       decided_at = case when $10 then $11::timestamptz else decided_at end,
       updated_at = $12
     where property_id = $1 and invoice_id = $2 returning ${columns}`,
    [
      propertyId,
      invoiceId,
      c.status ?? null,
      c.attempts ?? null,
      c.lastError !== undefined,
      c.lastError ?? null,
      c.reason !== undefined,
      c.reason ?? null,
      c.sentAt ?? null,
      c.decidedAt !== undefined,
      c.decidedAt ?? null,
      at,
    ],
  );
  return toDelivery(r!);
}

/** Claims lines of an invoice for a return; the lines another return already holds are left out of the answer. */
export async function claimReturnedLines(
  tx: Tx,
  propertyId: string,
  originalId: string,
  lineNos: readonly number[],
  returnId: string,
): Promise<number[]> {
  const rows = await tx.query<{ original_line_no: number }>(
    `insert into invoice_returns (property_id, original_invoice_id, original_line_no, return_invoice_id)
     select $1, $2, unnest($3::int[]), $4 on conflict do nothing returning original_line_no`,
    [propertyId, originalId, lineNos, returnId],
  );
  return rows.map((r) => r.original_line_no);
}

/** Gives the lines a return held back to the original (the return was cancelled). */
export async function releaseReturnedLines(tx: Tx, propertyId: string, returnId: string): Promise<void> {
  await tx.query(`delete from invoice_returns where property_id = $1 and return_invoice_id = $2`, [
    propertyId,
    returnId,
  ]);
}
