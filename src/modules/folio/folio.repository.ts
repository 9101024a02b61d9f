import type { Queryable } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";

/**
 * Persistence of folios, charges and payments. Every query takes the property id and filters by it.
 * Money comes back as bigint (selected as text: node-postgres would otherwise hand int8 over as a string
 * anyway, and never as a float); dates as YYYY-MM-DD text.
 */

export interface FolioRow {
  id: string;
  propertyId: string;
  reservationId: string;
  reservationCode: string;
  number: string;
  currency: string;
  amountScale: number;
  createdAt: Date;
  /** The stored balance (charges - payments, refunds included). */
  balanceMinor: bigint;
  /** 1 (the reservation's default folio) to 9: the reservation's folios, in the order they were opened. */
  windowNo: number;
  /** What the folio is for, e.g. "Company" (empty on the default folio unless named). */
  name: string;
}

export interface ChargeRow {
  id: string;
  folioId: string;
  /**
   * CREDIT: a negative line written when a return invoice of the folio is issued (invoiceId: the return);
   * CREDIT_REVERSAL: its opposite, written when that return invoice is cancelled.
   */
  kind: "ROOM" | "EXTRA" | "CREDIT" | "CREDIT_REVERSAL";
  code: string;
  description: string;
  amountMinor: bigint;
  businessDate: string;
  reservationRoomId: string | null;
  invoiceId: string | null;
  postedAt: Date;
  postedBy: string;
}

export interface PaymentRow {
  id: string;
  folioId: string;
  amountMinor: bigint;
  methodCode: string;
  methodKind: string;
  reference: string;
  reversedPaymentId: string | null;
  /** On a refunded payment: its latest refund or reversal. */
  reversedByPaymentId: string | null;
  /** On a payment: the sum of its refunds (positive); 0 on a refund. */
  refundedMinor: bigint;
  businessDate: string;
  postedAt: Date;
  postedBy: string;
}

type Raw = Record<string, unknown>;

const folioColumns = `id, property_id, reservation_id, reservation_code, number, currency, amount_scale, created_at, window_no, name`;
const folioSelect = `${folioColumns}, balance_minor::text as balance_minor`;

function toFolio(r: Raw): FolioRow {
  return {
    id: r.id as string,
    propertyId: r.property_id as string,
    reservationId: r.reservation_id as string,
    reservationCode: r.reservation_code as string,
    number: r.number as string,
    currency: r.currency as string,
    amountScale: r.amount_scale as number,
    createdAt: r.created_at as Date,
    balanceMinor: BigInt((r.balance_minor as string | undefined) ?? "0"),
    windowNo: r.window_no as number,
    name: r.name as string,
  };
}

export async function findFolio(
  tx: Tx,
  propertyId: string,
  folioId: string,
  lock = false,
): Promise<FolioRow | undefined> {
  const [r] = await tx.query<Raw>(
    `select ${folioSelect} from folios where property_id = $1 and id = $2 ${lock ? "for no key update" : ""}`,
    [propertyId, folioId],
  );
  return r === undefined ? undefined : toFolio(r);
}

export async function findFolioByReservation(
  tx: Tx,
  propertyId: string,
  reservationId: string,
  windowNo = 1,
): Promise<FolioRow | undefined> {
  const [r] = await tx.query<Raw>(
    `select ${folioSelect} from folios where property_id = $1 and reservation_id = $2 and window_no = $3`,
    [propertyId, reservationId, windowNo],
  );
  return r === undefined ? undefined : toFolio(r);
}

/** The folios of one reservation, by window. */
export async function listFoliosOfReservation(tx: Tx, propertyId: string, reservationId: string): Promise<FolioRow[]> {
  const rows = await tx.query<Raw>(
    `select ${folioSelect} from folios where property_id = $1 and reservation_id = $2 order by window_no`,
    [propertyId, reservationId],
  );
  return rows.map(toFolio);
}

/**
 * Inserts the folio unless the reservation has one in that window already (concurrent opens); returns the one that
 * exists.
 */
export async function insertFolio(tx: Tx, row: Omit<FolioRow, "number" | "balanceMinor">): Promise<FolioRow> {
  const [counter] = await tx.query<{ n: string }>(
    `insert into folio_counters (property_id, last_number) values ($1, 1)
     on conflict (property_id) do update set last_number = folio_counters.last_number + 1
     returning last_number::text as n`,
    [row.propertyId],
  );
  const number = formatFolioNumber(BigInt(counter!.n));
  const inserted = await tx.query<Raw>(
    `insert into folios (${folioColumns}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (property_id, reservation_id, window_no) do nothing returning ${folioSelect}`,
    [
      row.id,
      row.propertyId,
      row.reservationId,
      row.reservationCode,
      number,
      row.currency,
      row.amountScale,
      row.createdAt,
      row.windowNo,
      row.name,
    ],
  );
  if (inserted[0] !== undefined) return toFolio(inserted[0]);
  const existing = await findFolioByReservation(tx, row.propertyId, row.reservationId, row.windowNo);
  if (existing === undefined) throw new Error("folio vanished after a conflicting insert");
  return existing;
}

const chargeColumns = `id, folio_id, kind, code, description, amount_minor::text as amount_minor, business_date::text as business_date,
  reservation_room_id, invoice_id, posted_at, posted_by`;

function toCharge(r: Raw): ChargeRow {
  return {
    id: r.id as string,
    folioId: r.folio_id as string,
    kind: r.kind as ChargeRow["kind"],
    code: r.code as string,
    description: r.description as string,
    amountMinor: BigInt(r.amount_minor as string),
    businessDate: r.business_date as string,
    reservationRoomId: (r.reservation_room_id as string | null) ?? null,
    invoiceId: (r.invoice_id as string | null) ?? null,
    postedAt: r.posted_at as Date,
    postedBy: r.posted_by as string,
  };
}

export async function listCharges(tx: Tx, propertyId: string, folioId: string): Promise<ChargeRow[]> {
  const rows = await tx.query<Raw>(
    `select ${chargeColumns} from folio_charges where property_id = $1 and folio_id = $2 order by posted_at, id`,
    [propertyId, folioId],
  );
  return rows.map(toCharge);
}

export async function findCharge(tx: Tx, propertyId: string, chargeId: string): Promise<ChargeRow | undefined> {
  const [r] = await tx.query<Raw>(`select ${chargeColumns} from folio_charges where property_id = $1 and id = $2`, [
    propertyId,
    chargeId,
  ]);
  return r === undefined ? undefined : toCharge(r);
}

/**
 * Inserts a charge and adds it to the folio's stored balance in the same statement; a room charge for a night
 * already charged is skipped (the balance unchanged) and `undefined` returned.
 */
export async function insertCharge(
  tx: Tx,
  propertyId: string,
  c: Omit<ChargeRow, "invoiceId">,
): Promise<ChargeRow | undefined> {
  const rows = await tx.query<Raw>(
    `with c as (
       insert into folio_charges (id, property_id, folio_id, kind, code, description, amount_minor, business_date, reservation_room_id, posted_at, posted_by)
       values ($1, $2, $3, $4, $5, $6, $7::bigint, $8::date, $9, $10, $11)
       on conflict (property_id, reservation_room_id, business_date) where kind = 'ROOM' do nothing
       returning *),
     balance as (${addToBalance("c", "+")})
     select ${chargeColumns} from c`,
    [
      c.id,
      propertyId,
      c.folioId,
      c.kind,
      c.code,
      c.description,
      c.amountMinor.toString(),
      c.businessDate,
      c.reservationRoomId,
      c.postedAt,
      c.postedBy,
    ],
  );
  return rows[0] === undefined ? undefined : toCharge(rows[0]);
}

/** A payment with its refunds (negative payments pointing at it): the latest one's id and their sum. */
const paymentColumns = `p.id, p.folio_id, p.amount_minor::text as amount_minor, p.method_code, p.method_kind, p.reference, p.reversed_payment_id,
  (select r.id from folio_payments r where r.property_id = p.property_id and r.reversed_payment_id = p.id
    order by r.posted_at desc, r.id desc limit 1) as reversed_by_payment_id,
  (select coalesce(-sum(r.amount_minor), 0)::text from folio_payments r
    where r.property_id = p.property_id and r.reversed_payment_id = p.id) as refunded_minor,
  p.business_date::text as business_date, p.posted_at, p.posted_by`;

function toPayment(r: Raw): PaymentRow {
  return {
    id: r.id as string,
    folioId: r.folio_id as string,
    amountMinor: BigInt(r.amount_minor as string),
    methodCode: r.method_code as string,
    methodKind: r.method_kind as string,
    reference: r.reference as string,
    reversedPaymentId: (r.reversed_payment_id as string | null) ?? null,
    reversedByPaymentId: (r.reversed_by_payment_id as string | null) ?? null,
    refundedMinor: BigInt(r.refunded_minor as string),
    businessDate: r.business_date as string,
    postedAt: r.posted_at as Date,
    postedBy: r.posted_by as string,
  };
}

export async function listPayments(tx: Tx, propertyId: string, folioId: string): Promise<PaymentRow[]> {
  const rows = await tx.query<Raw>(
    `select ${paymentColumns} from folio_payments p where p.property_id = $1 and p.folio_id = $2 order by p.posted_at, p.id`,
    [propertyId, folioId],
  );
  return rows.map(toPayment);
}

export async function findPayment(tx: Tx, propertyId: string, paymentId: string): Promise<PaymentRow | undefined> {
  const [r] = await tx.query<Raw>(
    `select ${paymentColumns} from folio_payments p where p.property_id = $1 and p.id = $2`,
    [propertyId, paymentId],
  );
  return r === undefined ? undefined : toPayment(r);
}

/** Inserts a payment (a reversal: a negative one) and takes it off the folio's stored balance in the same statement. */
export async function insertPayment(
  tx: Tx,
  propertyId: string,
  p: Omit<PaymentRow, "reversedByPaymentId" | "refundedMinor">,
): Promise<PaymentRow> {
  await tx.query(
    `with p as (
       insert into folio_payments (id, property_id, folio_id, amount_minor, method_code, method_kind, reference, reversed_payment_id, business_date, posted_at, posted_by)
       values ($1, $2, $3, $4::bigint, $5, $6, $7, $8, $9::date, $10, $11)
       returning property_id, folio_id, amount_minor)
     ${addToBalance("p", "-")}`,
    [
      p.id,
      propertyId,
      p.folioId,
      p.amountMinor.toString(),
      p.methodCode,
      p.methodKind,
      p.reference,
      p.reversedPaymentId,
      p.businessDate,
      p.postedAt,
      p.postedBy,
    ],
  );
  return { ...p, reversedByPaymentId: null, refundedMinor: 0n };
}

/**
 * `folios.balance_minor` (charges - payments, reversals included) follows the ledger: every row inserted into
 * folio_charges or folio_payments is added to (subtracted from) it by the same statement, here and nowhere else.
 * The folio row update also serializes concurrent postings to one folio (each adds to the committed balance).
 */
function addToBalance(inserted: string, sign: "+" | "-"): string {
  return `update folios f set balance_minor = f.balance_minor ${sign} i.amount_minor
       from ${inserted} i where f.property_id = i.property_id and f.id = i.folio_id`;
}

/** The balance of a reservation's folios (all its windows), or undefined when it has none yet. */
export async function folioBalanceOfReservation(
  q: Queryable,
  propertyId: string,
  reservationId: string,
): Promise<bigint | undefined> {
  const [r] = await q.query<{ balance: string | null }>(
    `select sum(balance_minor)::text as balance from folios where property_id = $1 and reservation_id = $2`,
    [propertyId, reservationId],
  );
  return r?.balance == null ? undefined : BigInt(r.balance);
}

/** The balances of the folios of these reservations, all windows summed (reservations without one are left out). */
export async function folioBalancesOfReservations(
  q: Queryable,
  propertyId: string,
  reservationIds: readonly string[],
): Promise<Map<string, bigint>> {
  if (reservationIds.length === 0) return new Map();
  const rows = await q.query<{ reservation_id: string; balance: string }>(
    `select reservation_id, sum(balance_minor)::text as balance from folios
     where property_id = $1 and reservation_id = any($2::uuid[]) group by reservation_id`,
    [propertyId, reservationIds],
  );
  return new Map(rows.map((r) => [r.reservation_id, BigInt(r.balance)]));
}

/**
 * The reservations whose folio balance is not zero: the open folios (partial index `folios_unbalanced`), not every
 * folio of the hotel's history.
 */
export async function unbalancedFolioReservationIds(q: Queryable, propertyId: string): Promise<string[]> {
  const rows = await q.query<{ reservation_id: string }>(
    `select distinct reservation_id from folios where property_id = $1 and balance_minor <> 0`,
    [propertyId],
  );
  return rows.map((r) => r.reservation_id);
}

/** Charges of a folio that are on no issued invoice yet, oldest first (never a CREDIT line: those carry theirs). */
export async function uninvoicedCharges(
  tx: Tx,
  propertyId: string,
  folioId: string,
): Promise<(ChargeRow & { kind: "ROOM" | "EXTRA" })[]> {
  const rows = await tx.query<Raw>(
    `select ${chargeColumns} from folio_charges where property_id = $1 and folio_id = $2 and invoice_id is null
     and kind in ('ROOM', 'EXTRA') order by posted_at, id`,
    [propertyId, folioId],
  );
  return rows.map(toCharge) as (ChargeRow & { kind: "ROOM" | "EXTRA" })[];
}

/** Marks charges as invoiced; returns how many were still free (fewer than asked: someone invoiced them first). */
export async function markChargesInvoiced(
  tx: Tx,
  propertyId: string,
  chargeIds: readonly string[],
  invoiceId: string,
): Promise<number> {
  const rows = await tx.query(
    `update folio_charges set invoice_id = $3 where property_id = $1 and id = any($2::uuid[]) and invoice_id is null returning id`,
    [propertyId, chargeIds, invoiceId],
  );
  return rows.length;
}

/** The charges of a cancelled invoice are open again (on no invoice), so a new invoice can take them. */
export async function releaseInvoicedCharges(tx: Tx, propertyId: string, invoiceId: string): Promise<number> {
  const rows = await tx.query(
    `update folio_charges set invoice_id = null where property_id = $1 and invoice_id = $2 and kind in ('ROOM', 'EXTRA')
     returning id`,
    [propertyId, invoiceId],
  );
  return rows.length;
}

/** Folio numbers: a per-property sequence, zero-padded to at least six digits (`000042`). */
function formatFolioNumber(sequence: bigint): string {
  return sequence.toString().padStart(6, "0");
}

/** The folios of the reservations (a guest's data export names the folios of the guest's stays). */
export async function foliosOfReservations(
  q: Queryable,
  propertyId: string,
  reservationIds: readonly string[],
): Promise<FolioRow[]> {
  if (reservationIds.length === 0) return [];
  const rows = await q.query<Raw>(
    `select ${folioSelect} from folios where property_id = $1 and reservation_id = any($2::uuid[]) order by created_at, window_no, id`,
    [propertyId, reservationIds],
  );
  return rows.map(toFolio);
}
