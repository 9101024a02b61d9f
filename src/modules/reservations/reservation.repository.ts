import { statementFamily, type Queryable, type SqlPart, type Statement } from "../../db/queryable.ts";
import { aheadOf, type Tx } from "../../db/transaction.ts";
import { overbookedNightsSql, ratePlansSql, roomsSql, roomTypesSql } from "../inventory/index.ts";
import type { StayPolicy } from "../inventory/index.ts";
import { propertyFieldSql } from "../properties/index.ts";
import type { ReservationSource, ReservationStatus } from "./transitions.ts";

export interface RoomLine {
  id: string;
  position: number;
  roomTypeId: string;
  roomTypeCode: string;
  ratePlanId: string;
  ratePlanCode: string;
  roomId: string | null;
  roomNumber: string | null;
  adults: number;
  children: number;
  nightlyMinor: bigint[];
  totalMinor: bigint;
  checkedInAt: Date | null;
  checkedOutAt: Date | null;
  /** The guests of the room as the booking names them (names only; never in webhooks, feeds or logs). */
  guestNames: string[];
  /**
   * The cancellation and no-show policy of the rate plan as it stood when the line was booked (or moved to the plan),
   * or null when it had none: a later change of the plan's policy does not change this stay's fees.
   */
  policy: LinePolicy | null;
}

/** A payment guarantee by reference: a channel's or payment provider's token for a card, never the card itself. */
export interface PaymentGuarantee {
  /** The tokenised card id. */
  token: string;
  /** The card type as sent (e.g. VI, MC, AX or visa). */
  cardType: string;
  /** Who issued the token: the channel or the payment provider (e.g. Booking.com, stripe); may be empty. */
  issuer: string;
}

/** A rate plan's policy on one stay: free until `freeUntil` (arrival midnight in the hotel's zone - the hours). */
type LinePolicy = StayPolicy;

export interface Reservation {
  id: string;
  propertyId: string;
  code: string;
  status: ReservationStatus;
  source: ReservationSource;
  /** The connectivity provider that delivered a channel booking (null otherwise). */
  provider: string | null;
  /** The sales channel as sent (e.g. "Booking.com"), or null. */
  channel: string | null;
  externalReference: string | null;
  holderName: string;
  arrivalDate: string;
  departureDate: string;
  adults: number;
  children: number;
  notes: string;
  totalMinor: bigint;
  currency: string;
  amountScale: number;
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  changeSeq: bigint;
  /** A channel booking's amounts minus the same stay at our daily prices; null when they agree. */
  rateDifferenceMinor: bigint | null;
  /** Restrictions a channel booking broke, accepted because the channel had sold it (for staff to review). */
  restrictionOverrides: string[];
  /** The booker's remarks for the hotel (a channel booking's special requests), in the order sent. */
  remarks: string[];
  paymentGuarantee: PaymentGuarantee | null;
  /**
   * The nights this stay holds beyond the room type's rooms (an accepted overbooking), per room type and date;
   * empty when every night has a room. A release that frees rooms on those nights clears them (earliest first).
   */
  overbookedNights: OverbookedNight[];
  /** A TENTATIVE reservation's option: it is cancelled (reason option_expired) when this passes unconfirmed. */
  optionUntil: Date | null;
  /** Why the system cancelled it (`option_expired`); null for a cancellation by a person or a partner. */
  cancellationReason: string | null;
  /** The deposit its rate plans asked for when it was made (0: none) and its due date (null: none). */
  depositDueMinor: bigint;
  depositDueDate: string | null;
  /** The payments of its folio, net of refunds. */
  depositPaidMinor: bigint;
  /** A TENTATIVE or GUARANTEED stay whose deposit due date is before the business date, not paid in full. */
  depositOverdue: boolean;
  rooms: RoomLine[];
}

interface OverbookedNight {
  date: string;
  roomTypeId: string;
  roomTypeCode: string;
  /** Rooms short on that night. */
  rooms: number;
}

type Row = Omit<
  Reservation,
  "totalMinor" | "changeSeq" | "rooms" | "rateDifferenceMinor" | "depositDueMinor" | "depositPaidMinor"
> & {
  totalMinor: string;
  depositDueMinor: string;
  depositPaidMinor: string;
  changeSeq: string | null;
  rateDifferenceMinor: string | null;
};
type LineRow = Omit<RoomLine, "nightlyMinor" | "totalMinor" | "policy"> & {
  reservationId: string;
  policy: (Omit<LinePolicy, "feeValue" | "freeUntil"> & { feeValue: string; freeUntil: string }) | null;
  nightlyMinor: string[];
  totalMinor: string;
};

const reservationCols = `r.id, r.property_id as "propertyId", r.code, r.status, r.source, r.provider, r.channel, r.external_reference as "externalReference",
  r.holder_name as "holderName", to_char(r.arrival_date, 'YYYY-MM-DD') as "arrivalDate", to_char(r.departure_date, 'YYYY-MM-DD') as "departureDate",
  r.adults, r.children, r.notes, r.total_minor::text as "totalMinor", r.currency, ${propertyFieldSql("amountScale", "$1")} as "amountScale",
  r.cancelled_at as "cancelledAt", r.created_at as "createdAt", r.updated_at as "updatedAt", r.change_seq::text as "changeSeq",
  r.rate_difference_minor::text as "rateDifferenceMinor", r.restriction_overrides as "restrictionOverrides",
  r.remarks, r.payment_guarantee as "paymentGuarantee",
  ${overbookedNightsSql("$1", "r.id")} as "overbookedNights", r.option_until as "optionUntil", r.cancellation_reason as "cancellationReason",
  r.deposit_due_minor::text as "depositDueMinor", to_char(r.deposit_due_date, 'YYYY-MM-DD') as "depositDueDate",
  ${paidSql("r")}::text as "depositPaidMinor", ${depositOverdueSql("r", propertyFieldSql("businessDate", "$1"))} as "depositOverdue"`;

/** What the reservation row `r` has paid: its folio's payments net of refunds (addDepositPayment). */
function paidSql(r: string): string {
  return `coalesce((select x.paid_minor from reservation_payments_received x
    where x.property_id = ${r}.property_id and x.reservation_id = ${r}.id), 0)`;
}

/** Whether the reservation row `r` owes a deposit past its due date on the business date `businessDateExpr`. */
function depositOverdueSql(r: string, businessDateExpr: string): string {
  return `coalesce(${r}.deposit_due_date < ${businessDateExpr} and ${paidSql(r)} < ${r}.deposit_due_minor
    and ${r}.status in ('TENTATIVE', 'GUARANTEED'), false)`;
}

/**
 * The rows with their room lines. The arrival dates (for each line's free-until instant) come with the ids rather
 * than from a join back to reservations: on a table whose statistics lag behind its rows (just filled) the planner
 * joined that back by property only and filtered 500 x 500 pairs, about 100 ms for a 500-row search page.
 */
async function withLines(q: Queryable, propertyId: string, rows: Row[]): Promise<Reservation[]> {
  if (rows.length === 0) return [];
  const lines = await q.query<LineRow>(linesOf, [propertyId, rows.map((r) => r.id), rows.map((r) => r.arrivalDate)]);
  const byReservation = new Map<string, RoomLine[]>();
  for (const { reservationId, nightlyMinor, totalMinor, policy, ...line } of lines) {
    const list = byReservation.get(reservationId) ?? [];
    list.push({
      ...line,
      policy:
        policy === null
          ? null
          : { ...policy, feeValue: BigInt(policy.feeValue), freeUntil: new Date(policy.freeUntil) },
      nightlyMinor: nightlyMinor.map(BigInt),
      totalMinor: BigInt(totalMinor),
    });
    byReservation.set(reservationId, list);
  }
  return rows.map((r) => ({
    ...r,
    totalMinor: BigInt(r.totalMinor),
    depositDueMinor: BigInt(r.depositDueMinor),
    depositPaidMinor: BigInt(r.depositPaidMinor),
    changeSeq: BigInt(r.changeSeq ?? 0),
    rateDifferenceMinor: r.rateDifferenceMinor === null ? null : BigInt(r.rateDifferenceMinor),
    rooms: byReservation.get(r.id) ?? [],
  }));
}

/** The room lines of reservations (named: every read of a reservation runs it). */
const linesOf: Statement = {
  name: "reservations_lines_of",
  text: `select rr.id, rr.reservation_id as "reservationId", rr.position, rr.room_type_id as "roomTypeId", rt.code as "roomTypeCode",
            rr.rate_plan_id as "ratePlanId", rp.code as "ratePlanCode", rr.room_id as "roomId", rm.number as "roomNumber",
            rr.adults, rr.children, rr.nightly_minor::text[] as "nightlyMinor", rr.total_minor::text as "totalMinor",
            rr.checked_in_at as "checkedInAt", rr.checked_out_at as "checkedOutAt", rr.guest_names as "guestNames",
            case when rr.policy_fee_kind is null then null else json_build_object(
              'freeUntilHours', rr.policy_free_hours, 'feeKind', rr.policy_fee_kind, 'feeValue', rr.policy_fee_value::text,
              'freeUntil', (res.arrival_date::timestamp at time zone ${propertyFieldSql("timeZone", "$1")})
                           - make_interval(hours => rr.policy_free_hours)) end as policy
       from reservation_rooms rr
       join unnest($2::uuid[], $3::date[]) as res (id, arrival_date) on res.id = rr.reservation_id
       join (${roomTypesSql("$1")}) rt on rt.id = rr.room_type_id
       join (${ratePlansSql("$1")}) rp on rp.id = rr.rate_plan_id
       left join (${roomsSql("$1")}) rm on rm.id = rr.room_id
      where rr.property_id = $1 and rr.reservation_id = any($2::uuid[])
      order by rr.position`,
};

/** One reservation of the property with its lines; `lock` takes the row lock that serialises its writers. */
export async function findReservation(
  q: Queryable,
  propertyId: string,
  id: string,
  lock = false,
): Promise<Reservation | undefined> {
  const rows = await q.query<Row>(lock ? reservationLocked : reservationById, [propertyId, id]);
  return (await withLines(q, propertyId, rows))[0];
}

const reservationById: Statement = {
  name: "reservations_by_id",
  text: `select ${reservationCols} from reservations r where r.property_id = $1 and r.id = $2`,
};

const reservationLocked: Statement = {
  name: "reservations_by_id_locked",
  text: `${reservationById.text} for update of r`,
};

/** A booking is identified by (provider, channel, external reference); provider and channel may be null. */
export async function findByExternalReference(
  q: Queryable,
  propertyId: string,
  provider: string | null,
  channel: string | null,
  externalReference: string,
): Promise<string | undefined> {
  const [row] = await q.query<{ id: string }>(
    {
      name: "reservations_by_external_reference",
      text: "select id from reservations where property_id = $1 and coalesce(provider, '') = $2 and coalesce(channel, '') = $3 and external_reference = $4",
    },
    [propertyId, provider ?? "", channel ?? "", externalReference],
  );
  return row?.id;
}

/** The bookings of one provider with this reference, whatever their channel (at most a few). */
export async function findByProviderReference(
  q: Queryable,
  propertyId: string,
  provider: string,
  externalReference: string,
): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    "select id from reservations where property_id = $1 and provider = $2 and external_reference = $3 limit 2",
    [propertyId, provider, externalReference],
  );
  return rows.map((r) => r.id);
}

/**
 * The spec's reservation data before rendering (the connectivity list item and the reservation event payload):
 * no holder name, notes or prices. `roomTypes`: the distinct room type codes of its lines, in code order.
 */
export type ReservationSummary = Pick<
  Reservation,
  | "id"
  | "code"
  | "status"
  | "source"
  | "externalReference"
  | "channel"
  | "arrivalDate"
  | "departureDate"
  | "adults"
  | "children"
  | "cancelledAt"
  | "createdAt"
  | "updatedAt"
> & { roomTypes: string[] };

/**
 * One page of the change feed in change_seq order. change_seq is assigned at the end of every writing transaction
 * from a per-property counter row held until commit, so sequence order is commit order: a reader that resumes
 * after the last seq it saw never skips a change committed later.
 */
export async function changeFeed(
  q: Queryable,
  propertyId: string,
  after: bigint,
  updatedSince: Date | undefined,
  limit: number,
): Promise<(ReservationSummary & { changeSeq: string })[]> {
  return q.query(
    `select r.id, r.code, r.status, r.source, r.external_reference as "externalReference", r.channel,
            to_char(r.arrival_date, 'YYYY-MM-DD') as "arrivalDate", to_char(r.departure_date, 'YYYY-MM-DD') as "departureDate",
            r.adults, r.children, r.cancelled_at as "cancelledAt", r.created_at as "createdAt", r.updated_at as "updatedAt", r.change_seq::text as "changeSeq",
            coalesce((select array_agg(distinct rt.code order by rt.code) from reservation_rooms rr
                        join (${roomTypesSql("r.property_id")}) rt on rt.id = rr.room_type_id
                       where rr.property_id = r.property_id and rr.reservation_id = r.id), '{}') as "roomTypes"
       from reservations r
      where r.property_id = $1 and r.change_seq > $2 and ($3::timestamptz is null or r.updated_at >= $3)
      order by r.change_seq
      limit $4`,
    [propertyId, after.toString(), updatedSince ?? null, limit],
  );
}

export type NewReservation = Pick<
  Reservation,
  | "id"
  | "propertyId"
  | "status"
  | "source"
  | "provider"
  | "channel"
  | "externalReference"
  | "holderName"
  | "arrivalDate"
  | "departureDate"
  | "adults"
  | "children"
  | "notes"
  | "totalMinor"
  | "currency"
  | "createdAt"
  | "rateDifferenceMinor"
  | "restrictionOverrides"
  | "depositDueMinor"
  | "depositDueDate"
> & {
  /** In position order. */
  lines: {
    id: string;
    roomTypeId: string;
    ratePlanId: string;
    adults: number;
    children: number;
    nightlyMinor: readonly bigint[];
    totalMinor: bigint;
    /** The rate plan's policy now: the line keeps it. */
    policy: LinePolicy | null;
  }[];
  /** Set when the amounts charged differ from the daily prices (an explicit, permitted override). */
  priceOverride?: { by: string; at: Date; listedMinor: bigint } | null;
};

/**
 * The property's next reservation number: its counter plus one (R100001 first), past any number a row of the
 * property already uses (codes made before numbering was per property, by an older process during a rolling start,
 * or by a create whose number was given back although it had committed). Run ahead of the create's transaction
 * (aheadOf), committing on its own: the counter row is locked only while this statement runs, not until the create
 * commits, so a property's creates do not queue behind each other's transactions (ADR 0017). A create that fails
 * gives its number back with giveCodeNumberBack.
 */
export const takeCodeNumber = (propertyId: string) =>
  aheadOf<{ n: string }>(
    `insert into reservation_code_counters as c (property_id, last_number) values ($1::uuid, 100001)
       on conflict (property_id) do update set last_number = (
         -- generate_series yields in order: the first free number, usually after one index probe
         select k from generate_series(c.last_number + 1, c.last_number + 1000) k
          where not exists (select 1 from reservations x where x.property_id = $1::uuid and x.code = 'R' || k) limit 1)
       returning last_number::text as n`,
    [propertyId],
  );

/**
 * Gives a failed create's number back when no later one was taken meanwhile (the counter still ends at it): then
 * the next create takes it again and codes stay without a gap. A number some create took after it stays a gap.
 */
export async function giveCodeNumberBack(q: Queryable, propertyId: string, n: string): Promise<void> {
  await q.query(
    "update reservation_code_counters set last_number = last_number - 1 where property_id = $1 and last_number = $2::bigint",
    [propertyId, n],
  );
}

/**
 * Inserts a reservation (its code `R<codeNumber>`: takeCodeNumber) and its room lines in one statement. Returns the
 * code, or undefined when the property already holds this channel's external reference: then nothing is inserted
 * (ON CONFLICT waited for a concurrent insert of the same reference to commit) and the caller rolls back.
 */
export async function insertReservation(
  q: Queryable,
  r: NewReservation,
  codeNumber: string,
): Promise<string | undefined> {
  const [row] = await q.query<{ code: string }>(
    `with r as (
       insert into reservations (id, property_id, code, status, source, channel, external_reference, holder_name, arrival_date, departure_date,
                                 adults, children, notes, total_minor, currency, created_at, updated_at,
                                 price_override_by, price_override_at, price_listed_minor, provider, rate_difference_minor, restriction_overrides,
                                 deposit_due_minor, deposit_due_date)
       values ($1, $2, 'R' || $34::bigint, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $23, $24, $25, $26, $27, $28,
               $32, $33)
       on conflict (property_id, (coalesce(provider, '')), (coalesce(channel, '')), external_reference) where external_reference is not null do nothing
       returning id, code
     ), lines as (
       insert into reservation_rooms (id, property_id, reservation_id, position, room_type_id, rate_plan_id, adults, children, nightly_minor, total_minor, arrival_date,
                                      policy_free_hours, policy_fee_kind, policy_fee_value)
       select l.id, $2, r.id, l.n - 1, l.room_type_id, l.rate_plan_id, l.adults, l.children, l.nightly::bigint[], l.total, $8,
              l.free_hours, l.fee_kind, l.fee_value
         from r cross join unnest($16::uuid[], $17::uuid[], $18::uuid[], $19::int[], $20::int[], $21::text[], $22::bigint[],
                                  $29::int[], $30::text[], $31::bigint[])
                             with ordinality as l(id, room_type_id, rate_plan_id, adults, children, nightly, total, free_hours, fee_kind, fee_value, n)
     )
     select code from r`,
    [
      r.id,
      r.propertyId,
      r.status,
      r.source,
      r.channel,
      r.externalReference,
      r.holderName,
      r.arrivalDate,
      r.departureDate,
      r.adults,
      r.children,
      r.notes,
      r.totalMinor.toString(),
      r.currency,
      r.createdAt,
      r.lines.map((l) => l.id),
      r.lines.map((l) => l.roomTypeId),
      r.lines.map((l) => l.ratePlanId),
      r.lines.map((l) => l.adults),
      r.lines.map((l) => l.children),
      r.lines.map((l) => `{${l.nightlyMinor.join(",")}}`),
      r.lines.map((l) => l.totalMinor.toString()),
      r.priceOverride?.by ?? null,
      r.priceOverride?.at ?? null,
      r.priceOverride?.listedMinor.toString() ?? null,
      r.provider,
      r.rateDifferenceMinor?.toString() ?? null,
      r.restrictionOverrides,
      r.lines.map((l) => l.policy?.freeUntilHours ?? null),
      r.lines.map((l) => l.policy?.feeKind ?? null),
      r.lines.map((l) => l.policy?.feeValue.toString() ?? null),
      r.depositDueMinor.toString(),
      r.depositDueDate,
      codeNumber,
    ],
  );
  return row?.code;
}

export interface ListFilter {
  statuses: readonly ReservationStatus[];
  arrivalFrom: string | undefined;
  arrivalTo: string | undefined;
  updatedSince: Date | undefined;
  /** Code equal to it, or holder name containing it (both ignoring case); undefined = all. */
  query: string | undefined;
  afterSeq: bigint;
  limit: number;
}

/** The current head of the property's reservation change sequence (0 before the first change). */
export async function changeFeedHead(q: Queryable, propertyId: string): Promise<bigint> {
  const [row] = await q.query<{ seq: string }>(
    "select change_seq::text as seq from property_counters where property_id = $1",
    [propertyId],
  );
  return BigInt(row?.seq ?? "0");
}

/** A page in change-sequence order (the feed order: a changed reservation moves to the end). */
export async function listReservations(q: Queryable, propertyId: string, f: ListFilter): Promise<Reservation[]> {
  const rows = await q.query<Row>(
    `select ${reservationCols} from reservations r
      where r.property_id = $1 and r.change_seq > $2
        and (cardinality($3::text[]) = 0 or r.status = any($3::text[]))
        and ($4::date is null or r.arrival_date >= $4::date) and ($5::date is null or r.arrival_date < $5::date)
        and ($6::timestamptz is null or r.updated_at >= $6)
        and ($8::text is null or upper(r.code) = upper($8) or strpos(lower(r.holder_name), lower($8)) > 0)
      order by r.change_seq limit $7`,
    [
      propertyId,
      f.afterSeq.toString(),
      f.statuses,
      f.arrivalFrom ?? null,
      f.arrivalTo ?? null,
      f.updatedSince ?? null,
      f.limit,
      f.query ?? null,
    ],
  );
  return withLines(q, propertyId, rows);
}

/**
 * Gives the reservation the property's next change sequence: the LAST statement of the transaction, sent with its
 * COMMIT (Tx.queryLast). The counter row stays locked until commit, so sequences become visible in commit order.
 * `also` (the ARI feed entries of the change, parameters from $3) runs in the same statement, its counter taken
 * first: the hot counter rows are held for this one round trip and the commit. `last: false`: the caller's
 * transaction goes on after it (an ordinary statement; the counters stay locked until that later commit).
 */
export async function bumpChangeSeq(
  tx: Tx,
  propertyId: string,
  reservationId: string,
  also?: SqlPart,
  last = true,
): Promise<bigint> {
  const [row] = await (last ? tx.queryLast.bind(tx) : tx.query.bind(tx))<{ seq: string }>(
    changeSeqStatement(`with ${also === undefined ? "" : `${also.with},`}
     c as (insert into property_counters (property_id, change_seq)
           select $1, 1 ${also === undefined ? "" : "from (select count(*) from ari_rows) a"}
           on conflict (property_id) do update set change_seq = property_counters.change_seq + 1 returning change_seq)
     update reservations r set change_seq = c.change_seq from c where r.property_id = $1 and r.id = $2 returning r.change_seq::text as seq`),
    [propertyId, reservationId, ...(also?.params ?? [])],
  );
  return BigInt(row!.seq);
}

/** bumpChangeSeq's texts (alone, or with a change's ARI feed entries) as named statements. */
const changeSeqStatement = statementFamily("reservations_change_seq");

/** Another active line holding this room on overlapping dates (an assignment conflict), if any. */
/**
 * The code of another reservation holding the room on a night of [arrival, departure) (its room line not checked
 * out, the reservation still holding inventory), or undefined when the room is free.
 */
export async function roomTakenBetween(
  q: Queryable,
  propertyId: string,
  roomId: string,
  exceptLineId: string,
  arrival: string,
  departure: string,
): Promise<string | undefined> {
  const [row] = await q.query<{ code: string }>(
    `select r.code from reservation_rooms rr join reservations r on r.property_id = rr.property_id and r.id = rr.reservation_id
      where rr.property_id = $1 and rr.room_id = $2 and rr.id <> $3 and rr.checked_out_at is null
        and r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE') and r.arrival_date < $5 and r.departure_date > $4
      order by r.arrival_date, r.code limit 1`,
    [propertyId, roomId, exceptLineId, arrival, departure],
  );
  return row?.code;
}

/** Someone is in the room right now (checked in, not out). */
export async function roomOccupied(
  q: Queryable,
  propertyId: string,
  roomId: string,
  exceptLineId: string,
): Promise<boolean> {
  const rows = await q.query(
    "select 1 from reservation_rooms where property_id = $1 and room_id = $2 and id <> $3 and checked_in_at is not null and checked_out_at is null limit 1",
    [propertyId, roomId, exceptLineId],
  );
  return rows.length > 0;
}

/** How many of these reservations are in the status (for checks over ids another module found). */
export async function countInStatus(
  q: Queryable,
  propertyId: string,
  reservationIds: readonly string[],
  status: string,
): Promise<number> {
  if (reservationIds.length === 0) return 0;
  const [r] = await q.query<{ n: number }>(
    "select count(*)::int as n from reservations where property_id = $1 and id = any($2::uuid[]) and status = $3",
    [propertyId, reservationIds, status],
  );
  return r?.n ?? 0;
}

/** What a booking says for the hotel beyond the stay (see Migration0035BookingDetails); lines by position. */
export interface BookingDetails {
  remarks: string[];
  paymentGuarantee: PaymentGuarantee | null;
  guestNames: string[][];
}

/** Stores a booking's details in the transaction that creates or changes it. */
export async function setBookingDetails(
  q: Queryable,
  propertyId: string,
  reservationId: string,
  d: BookingDetails,
): Promise<void> {
  await q.query(
    `with r as (
       update reservations set remarks = $3, payment_guarantee = $4 where property_id = $1 and id = $2 returning id
     )
     update reservation_rooms rr set guest_names = coalesce((select array_agg(x) from jsonb_array_elements_text($5::jsonb -> rr.position) x), '{}')
      where rr.property_id = $1 and rr.reservation_id = $2`,
    [
      propertyId,
      reservationId,
      d.remarks,
      d.paymentGuarantee === null ? null : JSON.stringify(d.paymentGuarantee),
      JSON.stringify(d.guestNames),
    ],
  );
}

/**
 * The reservations whose deposit is overdue on the property's business date, the earliest due date first (index
 * reservations_deposit_due), after the page's key (due date, code), `limit` + 1 of them so the caller can tell there are more.
 */
export async function listOverdueDeposits(
  q: Queryable,
  propertyId: string,
  page: { limit: number; after: string[] | undefined },
): Promise<Reservation[]> {
  const [afterDue, afterCode] = page.after ?? [];
  const rows = await q.query<Row>(
    `select ${reservationCols} from reservations r
      where r.property_id = $1 and r.deposit_due_date is not null and r.status in ('TENTATIVE', 'GUARANTEED')
        and ${depositOverdueSql("r", propertyFieldSql("businessDate", "$1"))}
        and ($3::date is null or (r.deposit_due_date, r.code) > ($3::date, $4::text))
      order by r.deposit_due_date, r.code limit $2`,
    [propertyId, page.limit + 1, afterDue ?? null, afterCode ?? null],
  );
  return withLines(q, propertyId, rows);
}

/**
 * Adds a folio payment (negative: a refund) to what the reservation has paid, in the payment's transaction. The
 * reservation's row is not touched: the payment holds its folio's lock, and a cancellation holds the reservation's
 * while it waits for that folio to post its fee.
 */
export async function addDepositPayment(
  q: Queryable,
  propertyId: string,
  reservationId: string,
  amountMinor: bigint,
): Promise<void> {
  await q.query(
    `insert into reservation_payments_received as x (property_id, reservation_id, paid_minor) values ($1, $2, $3::bigint)
     on conflict (property_id, reservation_id) do update set paid_minor = x.paid_minor + excluded.paid_minor`,
    [propertyId, reservationId, amountMinor.toString()],
  );
}

export interface OverdueDeposit {
  reservationId: string;
  code: string;
  holderName: string;
  arrivalDate: string;
  dueDate: string;
  dueMinor: bigint;
  paidMinor: bigint;
}

/** The dashboard's overdue deposits: the first `limit` (earliest due date first) and how many there are in all. */
export async function overdueDepositsSummary(
  q: Queryable,
  propertyId: string,
  limit: number,
): Promise<{ count: number; first: OverdueDeposit[] }> {
  const rows = await q.query<
    Omit<OverdueDeposit, "dueMinor" | "paidMinor"> & { dueMinor: string; paidMinor: string; n: number }
  >(
    `select r.id as "reservationId", r.code, r.holder_name as "holderName", to_char(r.arrival_date, 'YYYY-MM-DD') as "arrivalDate",
            to_char(r.deposit_due_date, 'YYYY-MM-DD') as "dueDate", r.deposit_due_minor::text as "dueMinor",
            ${paidSql("r")}::text as "paidMinor", (count(*) over ())::int as n
       from reservations r
      where r.property_id = $1 and r.deposit_due_date is not null and r.status in ('TENTATIVE', 'GUARANTEED')
        and ${depositOverdueSql("r", propertyFieldSql("businessDate", "$1"))}
      order by r.deposit_due_date, r.code limit $2`,
    [propertyId, limit],
  );
  return {
    count: rows[0]?.n ?? 0,
    first: rows.map(({ n: _n, dueMinor, paidMinor, ...r }) => ({
      ...r,
      dueMinor: BigInt(dueMinor),
      paidMinor: BigInt(paidMinor),
    })),
  };
}
