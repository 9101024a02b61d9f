import { AppError, invalidField } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import { checkMoneyBound, MAX_MONEY_MINOR } from "../../lib/money.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { recordEvent, type PaymentEventData } from "../events/index.ts";
import { paymentMethodKind } from "./payment-methods.ts";
import * as repo from "./folio.repository.ts";
import { findRoute } from "./windows.repository.ts";
import type { ChargeRow, FolioRow, PaymentRow } from "./folio.repository.ts";
import { findPropertyRow, type PropertyRow } from "../properties/index.ts";
import { addDepositPayment, findReservationRef } from "../reservations/index.ts";
import type { Keyed } from "../../db/held-transaction.ts";

export interface FolioDeps {
  transact: Transact;
  clock: Clock;
}

export interface Folio extends FolioRow {
  chargesMinor: bigint;
  paymentsMinor: bigint;
  /** charges - payments: positive means the guest owes the hotel. */
  balanceMinor: bigint;
  /** What the hotel holds for the guest (a deposit, an overpayment): -balance when negative, else 0. */
  creditMinor: bigint;
  charges: ChargeRow[];
  payments: PaymentRow[];
}

/** A folio by id, or a reservation's folio by window (absent: 1, the default folio, opened on first use). */
type FolioKey = { folioId: string } | { reservationId: string; windowNo?: number };

interface PostChargeInput {
  folioId: string;
  /** Charge code, e.g. MINIBAR, LAUNDRY (A-Z, 0-9, _; at most 32). ROOM is reserved for the night audit. */
  code: string;
  description: string;
  amountMinor: bigint;
}

interface PostPaymentInput {
  folioId: string;
  amountMinor: bigint;
  methodCode: string;
  reference?: string;
}

interface ReversePaymentInput {
  paymentId: string;
  reference?: string;
}

interface RefundPaymentInput {
  paymentId: string;
  /** What goes back to the guest: 1 to what is left of the payment after its earlier refunds. */
  amountMinor: bigint;
  reference?: string;
}

/** Why a room night cannot be posted (the night audit leaves it out and reports it), or undefined when it can. */
export function roomChargeProblem(amountMinor: bigint, balanceMinor: bigint): string | undefined {
  if (amountMinor < 0n) return "the night's price is negative";
  if (amountMinor > MAX_MONEY_MINOR)
    return `the night's price is beyond the money bound (${MAX_MONEY_MINOR} minor units)`;
  if (balanceMinor + amountMinor > MAX_MONEY_MINOR)
    return `the folio's balance would go beyond the money bound (${MAX_MONEY_MINOR} minor units)`;
  return undefined;
}

export interface FolioService {
  getFolio(propertyId: string, key: FolioKey): Promise<Folio>;
  postCharge(propertyId: string, actor: string, input: PostChargeInput, keyed?: Keyed): Promise<ChargeRow>;
  postPayment(propertyId: string, actor: string, input: PostPaymentInput, keyed?: Keyed): Promise<PaymentRow>;
  reversePayment(propertyId: string, actor: string, input: ReversePaymentInput, keyed?: Keyed): Promise<PaymentRow>;
  refundPayment(propertyId: string, actor: string, input: RefundPaymentInput, keyed?: Keyed): Promise<PaymentRow>;
  /** Inside a caller's transaction: the reservation's folio, opened on first use. */
  openFolio(tx: Tx, propertyId: string, reservationId: string): Promise<FolioRow>;
  /**
   * Inside a caller's transaction (night audit): the room charge of one night, once; undefined when already posted
   * or free. Throws validation_failed, before any statement that could fail the transaction, when the night cannot
   * be charged (see roomChargeProblem): the caller may go on with other nights.
   */
  postRoomCharge(tx: Tx, propertyId: string, input: RoomChargeInput): Promise<ChargeRow | undefined>;
  /**
   * Inside a caller's transaction (a cancellation, a no-show, a check-out): a policy fee as an EXTRA charge on the
   * business date; undefined, posting nothing, when the folio's balance would pass the money bound (the change it
   * belongs to still goes through).
   */
  postFee(tx: Tx, propertyId: string, input: FeeInput): Promise<ChargeRow | undefined>;
  /** Inside a caller's transaction: the folio with its ledger and balance. */
  readFolio(tx: Tx, propertyId: string, folio: FolioRow): Promise<Folio>;
  /**
   * Inside a caller's transaction (the city ledger): the folio's whole open balance paid by a CITY_LEDGER payment,
   * with `folio.payment_posted` and an audit entry. 409 invalid_transition when the balance is not positive.
   */
  settleToLedger(tx: Tx, propertyId: string, actor: string, input: SettleInput): Promise<SettledFolio>;
}

interface SettleInput {
  folioId: string;
  /** The account's code, kept as the payment's reference. */
  reference: string;
}

interface SettledFolio {
  folio: FolioRow;
  payment: PaymentRow;
}

interface RoomChargeInput {
  reservationId: string;
  reservationRoomId: string;
  businessDate: string;
  amountMinor: bigint;
  description: string;
  actor: string;
}

interface FeeInput {
  reservationId: string;
  code: string;
  description: string;
  amountMinor: bigint;
  by: string;
}

export function createFolioService(deps: FolioDeps): FolioService {
  const { transact, clock } = deps;

  async function property(tx: Tx, propertyId: string): Promise<PropertyRow> {
    const p = await findPropertyRow(tx, propertyId);
    if (p === undefined) throw new AppError("not_found", "Property not found.");
    return p;
  }

  async function openFolio(tx: Tx, propertyId: string, reservationId: string): Promise<FolioRow> {
    const existing = await repo.findFolioByReservation(tx, propertyId, reservationId);
    if (existing !== undefined) return existing;
    const reservation = await findReservationRef(tx, propertyId, reservationId);
    if (reservation === undefined) throw new AppError("not_found", "Reservation not found.");
    const p = await property(tx, propertyId);
    const now = clock.now();
    return repo.insertFolio(tx, {
      id: newId(now.getTime()),
      propertyId,
      reservationId,
      reservationCode: reservation.code,
      currency: p.currency,
      amountScale: p.amountScale,
      createdAt: now,
      windowNo: 1,
      name: "",
    });
  }

  async function lockedFolio(tx: Tx, propertyId: string, folioId: string): Promise<FolioRow> {
    if (!isUuid(folioId)) throw invalidField("folioId", "must be a UUID");
    const folio = await repo.findFolio(tx, propertyId, folioId, true);
    if (folio === undefined) throw new AppError("not_found", "Folio not found.");
    return folio;
  }

  /**
   * The folio a charge of `code` posted to `folio` goes to: the routing rule of the code when the charge is posted to
   * the reservation's default folio (window 1), else that folio. Returned locked; the lookup takes no lock, so only
   * the folio written is ever locked.
   */
  async function routedFolio(tx: Tx, propertyId: string, folio: FolioRow, code: string): Promise<FolioRow> {
    let target = folio;
    if (folio.windowNo === 1) {
      const windowNo = await findRoute(tx, propertyId, folio.reservationId, code);
      if (windowNo !== undefined && windowNo !== 1)
        target = (await repo.findFolioByReservation(tx, propertyId, folio.reservationId, windowNo)) ?? folio;
    }
    return (await repo.findFolio(tx, propertyId, target.id, true))!;
  }

  async function readFolio(tx: Tx, propertyId: string, folio: FolioRow): Promise<Folio> {
    const [charges, payments] = [
      await repo.listCharges(tx, propertyId, folio.id),
      await repo.listPayments(tx, propertyId, folio.id),
    ];
    const chargesMinor = charges.reduce((s, c) => s + c.amountMinor, 0n);
    const paymentsMinor = payments.reduce((s, p) => s + p.amountMinor, 0n);
    const balanceMinor = chargesMinor - paymentsMinor;
    const creditMinor = balanceMinor < 0n ? -balanceMinor : 0n;
    return { ...folio, chargesMinor, paymentsMinor, balanceMinor, creditMinor, charges, payments };
  }

  /** The money bound on the folio's balance after a posting that changes it by `delta` (400 on `field`). */
  function checkBalance(folio: FolioRow, delta: bigint, field: string): void {
    const after = folio.balanceMinor + delta;
    if (after > MAX_MONEY_MINOR)
      throw invalidField(field, `would take the folio's balance beyond the money bound (${MAX_MONEY_MINOR})`);
    if (after < -MAX_MONEY_MINOR)
      throw invalidField(field, `would take the folio's credit beyond the money bound (${MAX_MONEY_MINOR})`);
  }

  /** A refund of `amount` of `original` (a positive payment), with the original's method. */
  async function refund(
    tx: Tx,
    propertyId: string,
    actor: string,
    original: PaymentRow,
    amount: bigint,
    reference: string,
  ): Promise<PaymentRow> {
    const folio = await lockedFolio(tx, propertyId, original.folioId);
    checkBalance(folio, amount, "amountMinor");
    const p = await property(tx, propertyId);
    const now = clock.now();
    return writePayment(tx, propertyId, folio, {
      id: newId(now.getTime()),
      folioId: folio.id,
      amountMinor: -amount,
      methodCode: original.methodCode,
      methodKind: original.methodKind,
      reference,
      reversedPaymentId: original.id,
      businessDate: p.businessDate,
      postedAt: now,
      postedBy: actor,
    });
  }

  /** A payment to refund, read after its folio is locked (the lock serializes refunds of one payment). */
  async function refundable(tx: Tx, propertyId: string, paymentId: string): Promise<PaymentRow> {
    if (!isUuid(paymentId)) throw invalidField("paymentId", "must be a UUID");
    const found = await repo.findPayment(tx, propertyId, paymentId);
    if (found === undefined) throw new AppError("not_found", "Payment not found.");
    await lockedFolio(tx, propertyId, found.folioId);
    const original = (await repo.findPayment(tx, propertyId, paymentId))!;
    if (original.reversedPaymentId !== null)
      throw new AppError("invalid_transition", "A refund or reversal cannot be refunded; post a new payment instead.");
    return original;
  }

  async function writePayment(
    tx: Tx,
    propertyId: string,
    folio: FolioRow,
    payment: Omit<PaymentRow, "reversedByPaymentId" | "refundedMinor">,
  ): Promise<PaymentRow> {
    const row = await repo.insertPayment(tx, propertyId, payment);
    // what the reservation has paid against its deposit, in the payment's transaction
    await addDepositPayment(tx, propertyId, folio.reservationId, row.amountMinor);
    await recordEvent(tx, {
      propertyId,
      type: "folio.payment_posted",
      occurredAt: row.postedAt,
      data: paymentEventData(folio, row),
    });
    return row;
  }

  return {
    openFolio,
    readFolio,

    async settleToLedger(tx, propertyId, actor, input) {
      const folio = await lockedFolio(tx, propertyId, input.folioId);
      if (folio.balanceMinor <= 0n)
        throw new AppError("invalid_transition", "The folio has no open balance to settle.");
      const p = await property(tx, propertyId);
      const now = clock.now();
      const payment = await writePayment(tx, propertyId, folio, {
        id: newId(now.getTime()),
        folioId: folio.id,
        amountMinor: folio.balanceMinor,
        methodCode: "CITY_LEDGER",
        methodKind: "CITY_LEDGER",
        reference: input.reference,
        reversedPaymentId: null,
        businessDate: p.businessDate,
        postedAt: now,
        postedBy: actor,
      });
      recordChange(tx, { propertyId, entity: "folio", entityId: folio.id, action: "settle", after: payment });
      return { folio, payment };
    },

    async getFolio(propertyId, key) {
      return transact(async (tx) => {
        let folio: FolioRow | undefined;
        if ("folioId" in key) {
          if (!isUuid(key.folioId)) throw invalidField("folioId", "must be a UUID");
          folio = await repo.findFolio(tx, propertyId, key.folioId);
          if (folio === undefined) throw new AppError("not_found", "Folio not found.");
        } else {
          if (!isUuid(key.reservationId)) throw invalidField("reservationId", "must be a UUID");
          const windowNo = key.windowNo ?? 1;
          if (!Number.isInteger(windowNo) || windowNo < 1 || windowNo > 9)
            throw invalidField("window", "must be 1 to 9");
          folio =
            windowNo === 1
              ? await openFolio(tx, propertyId, key.reservationId)
              : await repo.findFolioByReservation(tx, propertyId, key.reservationId, windowNo);
          if (folio === undefined) throw new AppError("not_found", "Folio not found.");
        }
        return readFolio(tx, propertyId, folio);
      });
    },

    async postCharge(propertyId, actor, input, keyed) {
      const code = input.code.trim().toUpperCase();
      if (!/^[A-Z0-9_]{1,32}$/.test(code)) throw invalidField("code", "must be 1-32 characters A-Z, 0-9 or _");
      if (code === "ROOM") throw invalidField("code", "ROOM charges are posted by the night audit");
      const description = input.description.trim();
      if (description.length === 0 || description.length > 200)
        throw invalidField("description", "must be 1-200 characters");
      checkAmount("amountMinor", input.amountMinor);
      return transact(async (tx) => {
        if (!isUuid(input.folioId)) throw invalidField("folioId", "must be a UUID");
        const named = await repo.findFolio(tx, propertyId, input.folioId);
        if (named === undefined) throw new AppError("not_found", "Folio not found.");
        const folio = await routedFolio(tx, propertyId, named, code);
        checkBalance(folio, input.amountMinor, "amountMinor");
        const p = await property(tx, propertyId);
        const now = clock.now();
        const row = await repo.insertCharge(tx, propertyId, {
          id: newId(now.getTime()),
          folioId: folio.id,
          kind: "EXTRA",
          code,
          description,
          amountMinor: input.amountMinor,
          businessDate: p.businessDate,
          reservationRoomId: null,
          postedAt: now,
          postedBy: actor,
        });
        recordChange(tx, { propertyId, entity: "folio", entityId: folio.id, action: "charge", after: row });
        return row!;
      }, keyed);
    },

    async postPayment(propertyId, actor, input, keyed) {
      const methodCode = input.methodCode.trim().toUpperCase();
      const methodKind = paymentMethodKind(methodCode);
      if (methodKind === undefined) throw invalidField("methodCode", "is not a known payment method");
      checkAmount("amountMinor", input.amountMinor);
      const reference = checkReference(input.reference);
      return transact(async (tx) => {
        const folio = await lockedFolio(tx, propertyId, input.folioId);
        // Beyond the open balance is a deposit or credit, within the money bound.
        checkBalance(folio, -input.amountMinor, "amountMinor");
        const p = await property(tx, propertyId);
        const now = clock.now();
        const row = await writePayment(tx, propertyId, folio, {
          id: newId(now.getTime()),
          folioId: folio.id,
          amountMinor: input.amountMinor,
          methodCode,
          methodKind,
          reference,
          reversedPaymentId: null,
          businessDate: p.businessDate,
          postedAt: now,
          postedBy: actor,
        });
        recordChange(tx, { propertyId, entity: "folio", entityId: folio.id, action: "payment", after: row });
        return row;
      }, keyed);
    },

    async reversePayment(propertyId, actor, input, keyed) {
      const reference = checkReference(input.reference);
      return transact(async (tx) => {
        const original = await refundable(tx, propertyId, input.paymentId);
        const left = original.amountMinor - original.refundedMinor;
        if (left <= 0n) throw new AppError("invalid_transition", "The payment is already reversed (refunded in full).");
        const row = await refund(tx, propertyId, actor, original, left, reference);
        recordChange(tx, { propertyId, entity: "folio", entityId: row.folioId, action: "reversal", after: row });
        return row;
      }, keyed);
    },

    async refundPayment(propertyId, actor, input, keyed) {
      checkAmount("amountMinor", input.amountMinor);
      const reference = checkReference(input.reference);
      return transact(async (tx) => {
        const original = await refundable(tx, propertyId, input.paymentId);
        const left = original.amountMinor - original.refundedMinor;
        if (input.amountMinor > left)
          throw invalidField(
            "amountMinor",
            `must be at most ${left}, what is left of the payment (${original.amountMinor}) after its refunds`,
            "validation_failed",
          );
        const row = await refund(tx, propertyId, actor, original, input.amountMinor, reference);
        recordChange(tx, { propertyId, entity: "folio", entityId: row.folioId, action: "refund", after: row });
        return row;
      }, keyed);
    },

    async postFee(tx, propertyId, input) {
      if (input.amountMinor <= 0n) return undefined;
      const opened = await openFolio(tx, propertyId, input.reservationId);
      const folio = await routedFolio(tx, propertyId, opened, input.code);
      if (roomChargeProblem(input.amountMinor, folio.balanceMinor) !== undefined) return undefined;
      const p = await property(tx, propertyId);
      const now = clock.now();
      return repo.insertCharge(tx, propertyId, {
        id: newId(now.getTime()),
        folioId: folio.id,
        kind: "EXTRA",
        code: input.code,
        description: input.description,
        amountMinor: input.amountMinor,
        businessDate: p.businessDate,
        reservationRoomId: null,
        postedAt: now,
        postedBy: input.by,
      });
    },

    async postRoomCharge(tx, propertyId, input) {
      const opened = await openFolio(tx, propertyId, input.reservationId);
      if (input.amountMinor === 0n) return undefined; // a complimentary night posts nothing
      // Locked, so the balance the bound is checked against is the one the charge is added to.
      const folio = await routedFolio(tx, propertyId, opened, "ROOM");
      const problem = roomChargeProblem(input.amountMinor, folio.balanceMinor);
      if (problem !== undefined)
        throw new AppError("validation_failed", `The room night cannot be charged: ${problem}.`, {
          details: [{ field: "amountMinor", reason: problem }],
        });
      const now = clock.now();
      const row = await repo.insertCharge(tx, propertyId, {
        id: newId(now.getTime()),
        folioId: folio.id,
        kind: "ROOM",
        code: "ROOM",
        description: input.description,
        amountMinor: input.amountMinor,
        businessDate: input.businessDate,
        reservationRoomId: input.reservationRoomId,
        postedAt: now,
        postedBy: input.actor,
      });
      recordChange(tx, { propertyId, entity: "folio", entityId: folio.id, action: "charge", after: row });
      return row;
    },
  };
}

/** Exactly the spec's "Payment data" fields; no personal data. */
function paymentEventData(
  folio: FolioRow,
  p: PaymentRow | Omit<PaymentRow, "reversedByPaymentId" | "refundedMinor">,
): PaymentEventData {
  return {
    paymentId: p.id,
    folioId: folio.id,
    folioNumber: folio.number,
    reservationId: folio.reservationId,
    reservationCode: folio.reservationCode,
    amountMinor: Number(p.amountMinor),
    amountScale: folio.amountScale,
    currency: folio.currency,
    methodCode: p.methodCode,
    methodKind: p.methodKind,
    isReversal: p.reversedPaymentId !== null,
    reversedPaymentId: p.reversedPaymentId,
    postedAt: p.postedAt.toISOString(),
  };
}

function checkAmount(field: string, amount: bigint, allowZero = false): void {
  if (amount < 0n || (!allowZero && amount === 0n))
    throw invalidField(field, allowZero ? "must not be negative" : "must be positive");
  checkMoneyBound(field, amount);
}

function checkReference(reference: string | undefined): string {
  const r = (reference ?? "").trim();
  if (r.length > 100) throw invalidField("reference", "must be at most 100 characters");
  return r;
}
