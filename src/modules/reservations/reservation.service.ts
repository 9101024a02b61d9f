import type pg from "pg";
import type { Transact, Tx } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, requireId } from "../../lib/ids.ts";
import {
  findRatePlan,
  findRoom,
  outOfOrderBetween,
  lockRoomDays,
  quoteStay,
  releaseRooms,
  requireRoomType,
  restrictionError,
  stayViolations,
  takeRooms,
  takeRoomsOfStays,
  takeRoomsOverbooking,
  violationsOf,
  type RoomDays,
  type ShortNight,
  type StayLine,
  type StayViolations,
} from "../inventory/index.ts";
import { parseDate, maxDate, minDate, parseRange } from "../../lib/dates.ts";
import { keyPageOf, keyPageResult } from "../../lib/page.ts";
import { poolQueryable, type Queryable } from "../../db/queryable.ts";
import { propertyById, type PropertyRow } from "../properties/index.ts";
import { chargedNights, checkStayTotal, everyNightPriced, stayPrices, sum } from "./pricing.ts";
import { agreedNights, bookingDetails } from "./booking-details.ts";
import * as repo from "./reservation.repository.ts";
import type { PaymentGuarantee, Reservation } from "./reservation.repository.ts";
import { availabilityEvents, reservationEvent } from "./reservation.events.ts";
import {
  assertTransition,
  holdsInventory,
  reservationSources,
  reservationStatuses,
  type ReservationSource,
  type ReservationStatus,
} from "./transitions.ts";
import { createFrontDesk, type FrontDesk, type OnStayMovement, type SettleAtCheckOut } from "./frontdesk.service.ts";
import { alertOverbooking } from "./overbooking.ts";
import { auditReservation, finishChange, requireReservation, type Actor } from "./common.ts";
import { checkOptionUntil, setOption } from "./options.ts";
import { postCancellationFee, type PostFee } from "./policy-fees.ts";
import { depositOfBooking } from "./deposits.ts";

export type { Actor };

export const maxNights = 60;
const maxRoomLines = 20;

export interface RoomLineInput {
  roomTypeId: string;
  ratePlanId: string;
  roomId?: string | undefined;
  adults: number;
  children?: number | undefined;
  /** Price of the line's whole stay; default: the sum of the daily prices. */
  amountMinor?: bigint | undefined;
  /** The agreed price of each night (a channel's), one per night; they add up to amountMinor when both are given. */
  nightlyMinor?: bigint[] | undefined;
  /** The room's guests by name (a channel booking's; names only). */
  guestNames?: string[] | undefined;
}

/** A channel booking's remarks and payment guarantee (by reference), kept for staff. */
export interface BookingExtras {
  remarks?: string[] | undefined;
  paymentGuarantee?: PaymentGuarantee | null | undefined;
}

interface CreateReservationInput extends BookingExtras {
  source: ReservationSource;
  /** The connectivity provider delivering a channel booking; with channel and externalReference it identifies the booking. */
  provider?: string | null | undefined;
  channel: string | null;
  externalReference: string | null;
  holderName: string;
  arrivalDate: string;
  departureDate: string;
  rooms: RoomLineInput[];
  status?: "TENTATIVE" | "GUARANTEED" | undefined;
  notes?: string | undefined;
  totalMinor?: bigint | undefined;
  currency?: string | undefined;
  /**
   * Charge amounts that differ from the daily prices. Needs Actor.canOverridePrice (else 403); recorded on the
   * reservation with Actor.by. Without it every amount must equal the daily prices, whoever calls.
   */
  priceOverride?: boolean | undefined;
  /**
   * Accept the stay even where its room type is sold out (an overbooking): needs Actor.canOverbook (else 403).
   * Without it a sold-out night is 409 sold_out. A channel sale (Actor.channelSale) is always accepted so.
   */
  overbook?: boolean | undefined;
  /** A TENTATIVE reservation's option: cancelled (reason option_expired) when it passes unconfirmed. */
  optionUntil?: Date | undefined;
}

interface UpdateReservationInput extends BookingExtras {
  arrivalDate?: string | undefined;
  departureDate?: string | undefined;
  holderName?: string | undefined;
  notes?: string | undefined;
  status?: "TENTATIVE" | "GUARANTEED" | undefined;
  /** A new end of a TENTATIVE reservation's option; GUARANTEED (confirming) ends the option. */
  optionUntil?: Date | undefined;
  rooms?: {
    reservationRoomId: string;
    roomTypeId?: string | undefined;
    ratePlanId?: string | undefined;
    adults?: number | undefined;
    children?: number | undefined;
    /** The line's agreed amount for the whole (new) stay: needs canOverridePrice when it differs from our prices. */
    amountMinor?: bigint | undefined;
    nightlyMinor?: bigint[] | undefined;
    guestNames?: string[] | undefined;
  }[];
}

interface ListReservationsInput {
  statuses?: readonly ReservationStatus[];
  arrivalFrom?: string | undefined;
  arrivalTo?: string | undefined;
  updatedSince?: Date | undefined;
  /** A code or part of the holder's name; blank = all. */
  query?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/**
 * What a caller writes in the change's own transaction, given the changed reservation (e.g. the outcome of the
 * partner message that caused it): its statements are sent before the change's last statement and commit or roll
 * back with it. Called at most once, only when the call changes something (not for a NEW that found its booking).
 */
export type AlongsideChange = (tx: Tx, r: Reservation) => Promise<unknown>;

export interface ReservationService extends FrontDesk {
  create(
    actor: Actor,
    input: CreateReservationInput,
    alongside?: AlongsideChange,
  ): Promise<{ reservation: Reservation; created: boolean }>;
  update(
    actor: Actor,
    reservationId: string,
    input: UpdateReservationInput,
    alongside?: AlongsideChange,
  ): Promise<Reservation>;
  cancel(actor: Actor, reservationId: string, alongside?: AlongsideChange): Promise<Reservation>;
  /** The same in a caller's transaction, by the system with its reason (an expired option). */
  cancelInTx(tx: Tx, propertyId: string, reservationId: string, reason: "option_expired"): Promise<void>;
  get(actor: Actor, reservationId: string): Promise<Reservation>;
  list(
    actor: Actor,
    input: ListReservationsInput,
  ): Promise<{ reservations: Reservation[]; nextCursor: string; hasMore: boolean }>;
  /** The reservations whose deposit is overdue, the earliest due date first; `limit` 1 to 500. */
  /** One page (`limit` 1-500) after `cursor`, the earliest due date first; `nextCursor` empty on the last page. */
  listOverdueDeposits(
    actor: Actor,
    page: { limit: number; cursor?: string },
  ): Promise<{ reservations: Reservation[]; hasMore: boolean; nextCursor: string }>;
}

export interface ReservationDeps {
  transact: Transact;
  pool: pg.Pool;
  clock: Clock;
  /** Posts a policy fee (cancellation, no-show, late check-out) to the reservation's folio, in the caller's transaction. */
  postFee?: PostFee;
  /** Told of every check-in and check-out of a room line, in its transaction (guest reporting; wired in app.ts). */
  onStayMovement?: OnStayMovement;
  /** The city ledger a check-out settles folios to (CheckOutRoomLine's `settle_to_account_id`; wired in app.ts). */
  settleAtCheckOut?: SettleAtCheckOut;
}

/** Thrown inside a create transaction that met an existing channel reference: roll back, return that one. */
class DuplicateReference extends Error {
  readonly existingId: string;
  constructor(existingId: string) {
    super("duplicate external reference");
    this.existingId = existingId;
  }
}

function text(field: string, value: string, max: number, required: boolean): string {
  const t = value.trim();
  if ((required && t.length === 0) || t.length > max)
    throw invalidField(field, required ? `1-${max} characters` : `at most ${max} characters`);
  return t;
}

function guests(field: string, adults: number, children: number, maxOccupancy: number): void {
  if (!Number.isInteger(adults) || adults < 1) throw invalidField(`${field}.adults`, "at least 1");
  if (!Number.isInteger(children) || children < 0) throw invalidField(`${field}.children`, "0 or more");
  if (adults + children > maxOccupancy)
    throw invalidField(
      `${field}.adults`,
      `adults + children exceed the room type's max occupancy (${maxOccupancy})`,
      "validation_failed",
    );
}

function checkStay(property: PropertyRow, arrival: string, departure: string): void {
  parseRange(arrival, departure, maxNights, ["arrivalDate", "departureDate"]);
  if (arrival < property.businessDate)
    throw invalidField(
      "arrivalDate",
      `must not be before the business date ${property.businessDate}`,
      "validation_failed",
    );
}

/**
 * Restrictions on the stay: thrown (409 restricted / 422 validation_failed), or for a channel sale returned as the
 * reasons to record on the booking (the channel already sold it).
 */
async function checkRestrictions(
  q: Queryable,
  actor: Actor,
  lines: readonly StayLine[],
  arrival: string,
  departure: string,
  arrivalIsNew: boolean,
): Promise<string[]> {
  return restrictionOutcome(actor, await stayViolations(q, actor.propertyId, lines, arrival, departure, arrivalIsNew));
}

function restrictionOutcome(actor: Actor, v: StayViolations): string[] {
  if (actor.channelSale === true) return [...v.closed, ...v.length].map((d) => d.reason);
  const err = restrictionError(v);
  if (err !== undefined) throw err;
  return [];
}

/** Stays sorted by room type, then date, so concurrent writers lock day rows in one order. */
function byRoomType<T extends { roomTypeId: string; from: string }>(lines: readonly T[]): T[] {
  return [...lines].sort((a, b) =>
    a.roomTypeId < b.roomTypeId ? -1 : a.roomTypeId > b.roomTypeId ? 1 : a.from < b.from ? -1 : 1,
  );
}

interface StayRange {
  roomTypeId: string;
  from: string;
  /** Exclusive. */
  to: string;
}

/** The nights of [from, to) outside [otherFrom, otherTo), as at most two ranges of the room type. */
function nightsOutside(roomTypeId: string, from: string, to: string, otherFrom: string, otherTo: string): StayRange[] {
  if (otherTo <= from || to <= otherFrom) return [{ roomTypeId, from, to }];
  const out: StayRange[] = [];
  if (from < otherFrom) out.push({ roomTypeId, from, to: otherFrom });
  if (otherTo < to) out.push({ roomTypeId, from: otherTo, to });
  return out;
}

/** What a channel's amounts differ from our listed prices by (null when equal or not a channel sale). */
function rateDifference(actor: Actor, charged: bigint, listed: bigint): bigint | null {
  return actor.channelSale === true && charged !== listed ? charged - listed : null;
}

/** A new reservation's short nights with their room type codes, in date then code order (as reads return them). */
function overbookedNightsOf(
  short: readonly ShortNight[],
  lines: readonly { roomTypeId: string; roomTypeCode: string }[],
): Reservation["overbookedNights"] {
  const codes = new Map(lines.map((l) => [l.roomTypeId, l.roomTypeCode]));
  return short
    .map((n) => ({
      date: n.date,
      roomTypeId: n.roomTypeId,
      roomTypeCode: codes.get(n.roomTypeId) ?? "",
      rooms: n.rooms,
    }))
    .sort((a, b) => (a.date !== b.date ? (a.date < b.date ? -1 : 1) : a.roomTypeCode < b.roomTypeCode ? -1 : 1));
}

function encodeCursor(seq: bigint): string {
  return Buffer.from(`s${seq}`).toString("base64url");
}

function decodeCursor(cursor: string): bigint {
  const raw = Buffer.from(cursor, "base64url").toString();
  if (!/^s\d{1,18}$/.test(raw)) throw invalidField("cursor", "not a cursor of this list");
  return BigInt(raw.slice(1));
}

export function createReservationService(deps: ReservationDeps): ReservationService {
  const { transact, clock } = deps;
  const reads = poolQueryable(deps.pool);
  const frontDesk = createFrontDesk(deps);

  /**
   * Takes or gives back the nights of a reservation's lines, sorted by room type so concurrent writers lock day rows
   * in one order. A release drops the reservation's own overbooked nights on those dates; a take with `overbook`
   * accepts sold-out nights and returns them (else a sold-out night throws sold_out).
   */
  async function moveInventory(
    tx: Tx,
    propertyId: string,
    reservationId: string,
    lines: { roomTypeId: string; from: string; to: string }[],
    take: boolean,
    overbook = false,
  ): Promise<ShortNight[]> {
    const stays: RoomDays[] = byRoomType(lines).map((l) => ({
      propertyId,
      roomTypeId: l.roomTypeId,
      counter: "sold",
      from: l.from,
      to: l.to,
    }));
    if (take && overbook) return takeRoomsOverbooking(tx, stays, reservationId, clock.now());
    for (const d of stays) {
      if (take) await takeRooms(tx, d);
      else await releaseRooms(tx, { ...d, holderId: reservationId });
    }
    return [];
  }

  async function create(
    actor: Actor,
    input: CreateReservationInput,
    alongside?: AlongsideChange,
  ): Promise<{ reservation: Reservation; created: boolean }> {
    if (!reservationSources.includes(input.source)) throw invalidField("source", reservationSources.join(", "));
    const status = input.status ?? "GUARANTEED";
    if (status !== "TENTATIVE" && status !== "GUARANTEED") throw invalidField("status", "TENTATIVE or GUARANTEED");
    const optionUntil =
      input.optionUntil === undefined ? null : checkOptionUntil(input.optionUntil, status, clock.now());
    const holderName = text("holderName", input.holderName, 200, true);
    const notes = text("notes", input.notes ?? "", 2000, false);
    const channel = input.channel === null ? null : text("channel", input.channel, 64, true);
    const provider =
      input.provider === undefined || input.provider === null ? null : text("provider", input.provider, 64, true);
    const externalReference =
      input.externalReference === null ? null : text("externalReference", input.externalReference, 128, true);
    if (input.rooms.length === 0 || input.rooms.length > maxRoomLines)
      throw invalidField("rooms", `1 to ${maxRoomLines} room lines`);
    const priceOverride = input.priceOverride === true;
    if (priceOverride && !actor.canOverridePrice)
      throw new AppError("forbidden", "priceOverride needs the permission reservations.override_price.");
    if (input.overbook === true && actor.canOverbook !== true)
      throw new AppError("forbidden", "overbook needs the permission reservations.overbook.");
    const overbook = input.overbook === true || actor.channelSale === true;
    parseDate("arrivalDate", input.arrivalDate);
    parseDate("departureDate", input.departureDate);
    const { arrivalDate: arrival, departureDate: departure } = input;
    const { days: nights } = parseRange(arrival, departure, maxNights, ["arrivalDate", "departureDate"]);
    // the code's number, taken ahead of the transaction (it leaves with BEGIN; the counter is not held to COMMIT)
    const codeNumber = repo.takeCodeNumber(actor.propertyId);
    const numbered = { ahead: codeNumber, keyed: actor.keyed };
    try {
      return await transact(async (tx) => {
        const now = clock.now();
        // One round trip: the quote (property, lines, prices, restrictions) and a channel booking's earlier copy.
        const [quote, existing] = await Promise.all([
          quoteStay(tx, actor.propertyId, input.rooms, arrival, departure),
          externalReference === null
            ? undefined
            : repo.findByExternalReference(tx, actor.propertyId, provider, channel, externalReference),
        ]);
        if (quote === undefined) throw new AppError("not_found", "Property not found.");
        const { property } = quote;
        checkStay(property, arrival, departure);
        if (input.currency !== undefined && input.currency !== property.currency)
          throw invalidField("currency", `must be ${property.currency}`, "validation_failed");
        if (existing !== undefined) throw new DuplicateReference(existing);
        const lines = [];
        let listedTotal = 0n;
        for (const [i, line] of input.rooms.entries()) {
          const field = `rooms[${i}]`;
          const { roomType: rt, ratePlan: rp, nightly: prices } = quote.lines[i]!;
          if (rt === undefined) throw new AppError("not_found", "Room type not found.");
          if (rp === undefined) throw new AppError("not_found", "Rate plan not found.");
          if (!rp.coversRoomType)
            throw invalidField(
              `${field}.ratePlanId`,
              "the rate plan does not cover the room type",
              "validation_failed",
            );
          const children = line.children ?? 0;
          guests(field, line.adults, children, rt.maxOccupancy);
          const listed = everyNightPriced(prices, nights, `${field}.ratePlanId`);
          // A single-line request may carry its price as the total (the mobile create request does).
          const amount = line.amountMinor ?? (input.rooms.length === 1 ? input.totalMinor : undefined);
          const nightly =
            line.nightlyMinor !== undefined
              ? agreedNights(listed, line.nightlyMinor, amount, priceOverride, `${field}.nightlyMinor`)
              : chargedNights(
                  listed,
                  amount,
                  priceOverride,
                  line.amountMinor !== undefined ? `${field}.amountMinor` : "totalMinor",
                );
          listedTotal += sum(listed);
          lines.push({
            id: newId(),
            roomTypeId: rt.id,
            roomTypeCode: rt.code,
            ratePlanId: rp.id,
            ratePlanCode: rp.code,
            policy: rp.policy,
            deposit: rp.deposit,
            roomId: line.roomId,
            adults: line.adults,
            children,
            nightlyMinor: nightly,
            totalMinor: sum(nightly),
          });
        }
        const total = checkStayTotal("totalMinor", sum(lines.map((l) => l.totalMinor)));
        const restrictionOverrides = restrictionOutcome(
          actor,
          violationsOf(
            // a pair's rows once, however many lines book it
            [
              ...new Map(quote.lines.map((l) => [`${l.ratePlan?.id}|${l.roomType?.id}`, l.restrictions])).values(),
            ].flat(),
            lines,
            arrival,
            departure,
            true,
          ),
        );
        const rateDifferenceMinor = rateDifference(actor, total, listedTotal);
        if (input.totalMinor !== undefined && input.totalMinor !== total)
          throw invalidField("totalMinor", `must equal the sum of the room lines (${total})`, "validation_failed");
        const overridden = lines.some((l, i) =>
          l.nightlyMinor.some((n, night) => n !== quote.lines[i]!.nightly[night]),
        );
        const priceOverrideRecord = overridden ? { by: actor.by ?? "system", at: now, listedMinor: listedTotal } : null;

        const details = bookingDetails(input, input.rooms);
        const deposit = depositOfBooking(lines, property.businessDate, arrival);
        const id = newId(now.getTime());
        const adults = lines.reduce((a, l) => a + l.adults, 0);
        const children = lines.reduce((a, l) => a + l.children, 0);
        const fields = {
          id,
          propertyId: actor.propertyId,
          status,
          source: input.source,
          provider,
          channel,
          externalReference,
          holderName,
          arrivalDate: arrival,
          departureDate: departure,
          adults,
          children,
          notes,
          totalMinor: total,
          currency: property.currency,
          rateDifferenceMinor,
          restrictionOverrides,
          depositDueMinor: deposit.dueMinor,
          depositDueDate: deposit.dueDate,
        };
        const row = { ...fields, createdAt: now, lines, priceOverride: priceOverrideRecord };
        // One round trip: the rows and the guarded takes of the nights (sent together; locks in the usual order).
        const [inserted, taken] = await Promise.allSettled([
          codeNumber.rows.then(([taken]) => repo.insertReservation(tx, row, taken!.n)),
          (async (): Promise<ShortNight[]> => {
            const stays = byRoomType(
              lines.map((l) => ({
                propertyId: actor.propertyId,
                roomTypeId: l.roomTypeId,
                counter: "sold" as const,
                from: arrival,
                to: departure,
              })),
            );
            if (overbook) return takeRoomsOverbooking(tx, stays, id, now);
            await takeRoomsOfStays(tx, stays);
            return [];
          })(),
        ]);
        if (inserted.status === "rejected") throw inserted.reason;
        const code = inserted.value;
        // A concurrent create with the same reference committed first (ON CONFLICT waited for it).
        if (code === undefined)
          throw new DuplicateReference(
            (await repo.findByExternalReference(tx, actor.propertyId, provider, channel, externalReference!))!,
          );
        if (taken.status === "rejected") throw taken.reason;
        if (details !== undefined) await repo.setBookingDetails(tx, actor.propertyId, id, details);
        let r: Reservation = {
          ...fields,
          remarks: details?.remarks ?? [],
          paymentGuarantee: details?.paymentGuarantee ?? null,
          code,
          amountScale: property.amountScale,
          cancelledAt: null,
          createdAt: now,
          updatedAt: now,
          changeSeq: 0n,
          overbookedNights: overbookedNightsOf(taken.value, lines),
          optionUntil,
          cancellationReason: null,
          depositPaidMinor: 0n,
          depositOverdue: false,
          rooms: lines.map((l, position) => ({
            id: l.id,
            position,
            roomTypeId: l.roomTypeId,
            roomTypeCode: l.roomTypeCode,
            ratePlanId: l.ratePlanId,
            ratePlanCode: l.ratePlanCode,
            policy: l.policy,
            roomId: null,
            roomNumber: null,
            adults: l.adults,
            children: l.children,
            nightlyMinor: l.nightlyMinor,
            totalMinor: l.totalMinor,
            checkedInAt: null,
            checkedOutAt: null,
            guestNames: details?.guestNames[position] ?? [],
          })),
        };
        if (optionUntil !== null) await setOption(tx, actor.propertyId, id, optionUntil);
        if (lines.some((l) => l.roomId !== undefined)) {
          for (const l of lines)
            if (l.roomId !== undefined) await frontDesk.assignInTx(tx, actor.propertyId, id, l.id, l.roomId);
          r = await requireReservation(tx, actor.propertyId, id, false);
        }
        const events = [
          reservationEvent("reservation.created", r, now),
          ...availabilityEvents(
            actor.propertyId,
            arrival,
            departure,
            r.rooms.map((l) => l.roomTypeCode),
            now,
          ),
        ];
        if (taken.value.length > 0) await alertOverbooking(tx, r, now);
        auditReservation(tx, "create", undefined, r);
        // the caller's statements are sent first: finishChange's last statement leaves with the COMMIT
        const also = alongside?.(tx, r);
        const [reservation] = await Promise.all([finishChange(tx, r, events), also]);
        return { reservation, created: true };
      }, numbered);
    } catch (err) {
      // rolled back: the number goes back unless a later one was taken meanwhile
      if (codeNumber.alone)
        await codeNumber.rows
          .then(([taken]) => repo.giveCodeNumberBack(reads, actor.propertyId, taken!.n))
          .catch(() => undefined);
      if (!(err instanceof DuplicateReference)) throw err;
      return { reservation: (await repo.findReservation(reads, actor.propertyId, err.existingId))!, created: false };
    }
  }

  async function update(
    actor: Actor,
    reservationId: string,
    input: UpdateReservationInput,
    alongside?: AlongsideChange,
  ): Promise<Reservation> {
    return transact(async (tx) => {
      const now = clock.now();
      const property = await propertyById(tx, actor.propertyId);
      const before = await requireReservation(tx, actor.propertyId, reservationId, true);
      if (!holdsInventory.has(before.status))
        throw new AppError("invalid_transition", `A ${before.status} reservation cannot be changed.`);
      const inHouse = before.status === "IN_HOUSE";
      const arrival = input.arrivalDate ?? before.arrivalDate;
      const departure = input.departureDate ?? before.departureDate;
      const datesChanged = arrival !== before.arrivalDate || departure !== before.departureDate;
      if (datesChanged) {
        if (inHouse && arrival !== before.arrivalDate)
          throw new AppError("conflict", "The arrival date of an in-house reservation cannot change.");
        parseRange(arrival, departure, maxNights, ["arrivalDate", "departureDate"]);
        if (arrival !== before.arrivalDate) checkStay(property, arrival, departure);
        if (departure <= property.businessDate && departure !== before.departureDate)
          throw invalidField("departureDate", "must be after the business date", "validation_failed");
      }
      let status = before.status;
      if (input.status !== undefined && input.status !== before.status) {
        assertTransition(before.status, input.status);
        status = input.status;
      }
      // Confirming ends the option; a new end needs a TENTATIVE reservation (after this change).
      const optionUntil =
        input.optionUntil !== undefined
          ? checkOptionUntil(input.optionUntil, status, now)
          : status === "TENTATIVE"
            ? before.optionUntil
            : null;
      const holderName =
        input.holderName === undefined ? before.holderName : text("holderName", input.holderName, 200, true);
      const notes = input.notes === undefined ? before.notes : text("notes", input.notes, 2000, false);

      const changes = new Map((input.rooms ?? []).map((c) => [c.reservationRoomId, c]));
      for (const key of changes.keys())
        if (!before.rooms.some((l) => l.id === key)) throw new AppError("not_found", "Room line not found.");
      // The nights each line gives back and takes: on another room type all of them; on the same type only the
      // nights that differ (the nights kept stay held as they are: a moved in-house line's earlier nights are on
      // its former type, and a kept overbooked night stays the holder's).
      const released: StayRange[] = [];
      const taken: StayRange[] = [];
      const lineUpdates = [];
      const stayLines: StayLine[] = [];
      let restayed = false;
      let listedTotal = 0n;
      for (const [i, line] of before.rooms.entries()) {
        const c = changes.get(line.id);
        const field = `rooms[${i}]`;
        const roomTypeId = c?.roomTypeId ?? line.roomTypeId;
        const ratePlanId = c?.ratePlanId ?? line.ratePlanId;
        const rt = await requireRoomType(tx, actor.propertyId, roomTypeId);
        if (roomTypeId !== line.roomTypeId && line.checkedInAt !== null)
          throw new AppError("conflict", "The room type of a checked-in room line cannot change.");
        const rp = await findRatePlan(tx, actor.propertyId, requireId(ratePlanId, "Rate plan"));
        if (rp === undefined) throw new AppError("not_found", "Rate plan not found.");
        if (!rp.roomTypeIds.includes(rt.id))
          throw invalidField(`${field}.ratePlanId`, "the rate plan does not cover the room type", "validation_failed");
        const adults = c?.adults ?? line.adults;
        const children = c?.children ?? line.children;
        guests(field, adults, children, rt.maxOccupancy);
        // a plan priced by occupancy prices the adults too
        const repriced =
          datesChanged ||
          roomTypeId !== line.roomTypeId ||
          ratePlanId !== line.ratePlanId ||
          (rp.pricesByOccupancy && adults !== line.adults);
        const listed =
          repriced || c?.amountMinor !== undefined
            ? await stayPrices(tx, actor.propertyId, rp.id, rt.id, arrival, departure, `${field}.ratePlanId`, adults)
            : line.nightlyMinor;
        // An agreed amount (a channel's revision) stands; otherwise a repriced line takes our daily prices.
        const nightly =
          c?.nightlyMinor !== undefined
            ? agreedNights(listed, c.nightlyMinor, c.amountMinor, actor.canOverridePrice, `${field}.nightlyMinor`)
            : c?.amountMinor !== undefined
              ? chargedNights(listed, c.amountMinor, actor.canOverridePrice, `${field}.amountMinor`)
              : listed;
        listedTotal += sum(listed);
        if (roomTypeId !== line.roomTypeId) {
          released.push({ roomTypeId: line.roomTypeId, from: before.arrivalDate, to: before.departureDate });
          taken.push({ roomTypeId, from: arrival, to: departure });
        } else if (datesChanged) {
          released.push(...nightsOutside(roomTypeId, before.arrivalDate, before.departureDate, arrival, departure));
          taken.push(...nightsOutside(roomTypeId, arrival, departure, before.arrivalDate, before.departureDate));
        }
        // A room of another type no longer fits the line; a kept room must still be free on the new dates.
        const roomId = roomTypeId !== line.roomTypeId ? null : line.roomId;
        lineUpdates.push({
          id: line.id,
          roomTypeId,
          ratePlanId,
          adults,
          children,
          nightly,
          total: sum(nightly),
          roomId,
          recheckRoom: datesChanged && roomId !== null,
          // a line moved to another rate plan takes that plan's policy as it is now; a kept plan keeps the line's
          policy: rp.policy,
        });
        stayLines.push({ roomTypeId, ratePlanId, roomTypeCode: rt.code, ratePlanCode: rp.code });
        if (repriced) restayed = true;
      }
      const newTotal = sum(lineUpdates.map((l) => l.total));
      // A new price meets the money bound; a stay's old price (data from before the bound) may stay as it is.
      if (newTotal !== before.totalMinor) checkStayTotal("totalMinor", newTotal);
      // A changed stay meets the restrictions again (an in-house guest's arrival is history: no closed-to-arrival).
      const restrictionOverrides = restayed
        ? await checkRestrictions(tx, actor, stayLines, arrival, departure, !inHouse)
        : before.restrictionOverrides;
      const rateDifferenceMinor =
        actor.channelSale === true ? rateDifference(actor, newTotal, listedTotal) : before.rateDifferenceMinor;
      await lockRoomDays(tx, actor.propertyId, byRoomType([...released, ...taken]));
      await moveInventory(tx, actor.propertyId, before.id, released, false);
      // A channel's revision was sold by the channel too: nights it adds on a sold-out day are an overbooking.
      const short = await moveInventory(tx, actor.propertyId, before.id, taken, true, actor.channelSale === true);
      for (const l of lineUpdates) {
        await tx.query(
          `update reservation_rooms set room_type_id = $3, rate_plan_id = $4, adults = $5, children = $6, nightly_minor = $7::bigint[], total_minor = $8, room_id = $9,
                  arrival_date = $10,
                  policy_free_hours = case when rate_plan_id = $4 then policy_free_hours else $11::int end,
                  policy_fee_kind = case when rate_plan_id = $4 then policy_fee_kind else $12::text end,
                  policy_fee_value = case when rate_plan_id = $4 then policy_fee_value else $13::bigint end
            where property_id = $1 and id = $2`,
          [
            actor.propertyId,
            l.id,
            l.roomTypeId,
            l.ratePlanId,
            l.adults,
            l.children,
            l.nightly.map(String),
            l.total.toString(),
            l.roomId,
            arrival,
            l.policy?.freeHours ?? null,
            l.policy?.feeKind ?? null,
            l.policy?.feeValue.toString() ?? null,
          ],
        );
        // the room row lock serialises this check with assignments, check-ins and out-of-order periods of the room
        if (l.recheckRoom) await findRoom(tx, actor.propertyId, l.roomId!, true);
        const takenBy = l.recheckRoom
          ? await repo.roomTakenBetween(tx, actor.propertyId, l.roomId!, l.id, arrival, departure)
          : undefined;
        if (takenBy !== undefined)
          throw new AppError(
            "conflict",
            `The assigned room is taken by reservation ${takenBy} on the new dates; assign another room first.`,
          );
        const [ooo] = l.recheckRoom ? await outOfOrderBetween(tx, actor.propertyId, l.roomId!, arrival, departure) : [];
        if (ooo !== undefined)
          throw new AppError(
            "conflict",
            `The assigned room is out of order from ${ooo.fromDate} to ${ooo.toDate} (period ${ooo.id}) on the new dates; assign another room first.`,
          );
      }
      await tx.query(
        `update reservations set arrival_date = $3, departure_date = $4, status = $5, holder_name = $6, notes = $7, adults = $8, children = $9, total_minor = $10, updated_at = $11,
                rate_difference_minor = $12, restriction_overrides = $13
          where property_id = $1 and id = $2`,
        [
          actor.propertyId,
          before.id,
          arrival,
          departure,
          status,
          holderName,
          notes,
          lineUpdates.reduce((a, l) => a + l.adults, 0),
          lineUpdates.reduce((a, l) => a + l.children, 0),
          newTotal.toString(),
          now,
          rateDifferenceMinor?.toString() ?? null,
          restrictionOverrides,
        ],
      );
      if (optionUntil?.getTime() !== before.optionUntil?.getTime())
        await setOption(tx, actor.propertyId, before.id, optionUntil);
      const details = bookingDetails(
        input,
        before.rooms.map((l) => ({ guestNames: changes.get(l.id)?.guestNames })),
        before,
      );
      if (details !== undefined) await repo.setBookingDetails(tx, actor.propertyId, before.id, details);
      const r = await requireReservation(tx, actor.propertyId, before.id, false);
      auditReservation(tx, "modify", before, r);
      // Staff hear of a revision only when it is short on a night (or by a room) it was not short before.
      const wasShort = new Map(before.overbookedNights.map((n) => [`${n.roomTypeId}|${n.date}`, n.rooms]));
      if (
        short.length > 0 &&
        r.overbookedNights.some((n) => n.rooms > (wasShort.get(`${n.roomTypeId}|${n.date}`) ?? 0))
      )
        await alertOverbooking(tx, r, now);
      const events = [reservationEvent("reservation.updated", r, now)];
      if (released.length + taken.length > 0) {
        const codes = [...before.rooms.map((l) => l.roomTypeCode), ...r.rooms.map((l) => l.roomTypeCode)];
        events.push(
          ...availabilityEvents(
            actor.propertyId,
            arrival < before.arrivalDate ? arrival : before.arrivalDate,
            departure > before.departureDate ? departure : before.departureDate,
            codes,
            now,
          ),
        );
      }
      const also = alongside?.(tx, r);
      const [changed] = await Promise.all([finishChange(tx, r, events), also]);
      return changed;
    }, actor.keyed);
  }

  /**
   * Cancels inside the caller's transaction. What the stay still holds goes back: every night before arrival; once
   * the guest came (in house, checked out) only the nights from the business date on (a check-out does not give back
   * the nights it cut short). `reason` is the system's (an expired option); null for people and partners.
   */
  async function cancelInTx(
    tx: Tx,
    propertyId: string,
    reservationId: string,
    reason: "option_expired" | null,
    last: boolean,
    by = "system",
    alongside?: AlongsideChange,
  ): Promise<Reservation> {
    const now = clock.now();
    const before = await requireReservation(tx, propertyId, reservationId, true);
    assertTransition(before.status, "CANCELLED");
    const stayed = before.status === "IN_HOUSE" || before.status === "CHECKED_OUT";
    const from = stayed
      ? maxDate(before.arrivalDate, (await propertyById(tx, propertyId)).businessDate)
      : before.arrivalDate;
    const releases = holdsInventory.has(before.status) || stayed ? from < before.departureDate : false;
    if (releases) {
      await moveInventory(
        tx,
        propertyId,
        before.id,
        before.rooms.map((l) => ({ roomTypeId: l.roomTypeId, from, to: before.departureDate })),
        false,
      );
    }
    await tx.query(
      `update reservations set status = 'CANCELLED', cancelled_at = $3, updated_at = $3, option_until = null, cancellation_reason = $4,
              nights_kept_until = $5
        where property_id = $1 and id = $2`,
      // a stay that had begun keeps the nights before `from` (inventory:verify recomputes the days from this)
      [propertyId, before.id, now, reason, stayed ? minDate(from, before.departureDate) : null],
    );
    // an expired option is the system's cancellation, never the guest's late one
    if (reason === null) await postCancellationFee(tx, deps.postFee, before, now, by);
    const r = await requireReservation(tx, propertyId, before.id, false);
    auditReservation(tx, "cancel", before, r);
    const released = releases
      ? availabilityEvents(
          propertyId,
          from,
          r.departureDate,
          r.rooms.map((l) => l.roomTypeCode),
          now,
        )
      : [];
    const also = alongside?.(tx, r);
    const [cancelled] = await Promise.all([
      finishChange(tx, r, [reservationEvent("reservation.cancelled", r, now), ...released], { last }),
      also,
    ]);
    return cancelled;
  }

  const cancel = (actor: Actor, reservationId: string, alongside?: AlongsideChange): Promise<Reservation> =>
    transact((tx) => cancelInTx(tx, actor.propertyId, reservationId, null, true, actor.by, alongside), {
      keyed: actor.keyed,
    });

  return {
    ...frontDesk,
    create,
    update,
    cancel,
    cancelInTx: async (tx, propertyId, reservationId, reason) => {
      await cancelInTx(tx, propertyId, reservationId, reason, false);
    },
    async get(actor, reservationId) {
      const r = await repo.findReservation(reads, actor.propertyId, requireId(reservationId, "Reservation"));
      if (r === undefined) throw new AppError("not_found", "Reservation not found.");
      return r;
    },
    async list(actor, input) {
      const limit = input.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw invalidField("limit", "1 to 500");
      for (const s of input.statuses ?? [])
        if (!reservationStatuses.includes(s)) throw invalidField("statuses", reservationStatuses.join(", "));
      if (input.arrivalFrom !== undefined) parseDate("arrivalFrom", input.arrivalFrom);
      if (input.arrivalTo !== undefined) parseDate("arrivalTo", input.arrivalTo);
      const query = input.query?.trim() ?? "";
      if (query.length > 100) throw invalidField("query", "at most 100 characters");
      const afterSeq = input.cursor === undefined || input.cursor === "" ? 0n : decodeCursor(input.cursor);
      const rows = await repo.listReservations(reads, actor.propertyId, {
        statuses: input.statuses ?? [],
        arrivalFrom: input.arrivalFrom,
        arrivalTo: input.arrivalTo,
        updatedSince: input.updatedSince,
        query: query === "" ? undefined : query,
        afterSeq,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        reservations: page,
        nextCursor: encodeCursor(last === undefined ? afterSeq : last.changeSeq),
        hasMore: rows.length > limit,
      };
    },
    async listOverdueDeposits(actor, input) {
      const page = keyPageOf(input, 500, ["date", "text"]);
      const rows = await repo.listOverdueDeposits(reads, actor.propertyId, page);
      const { items, nextCursor } = keyPageResult(rows, page.limit, (r) => [r.depositDueDate ?? "", r.code]);
      return { reservations: items, hasMore: rows.length > page.limit, nextCursor };
    },
  };
}
