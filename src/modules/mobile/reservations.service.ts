import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import {
  boardTypes,
  findRatePlan,
  findRoom,
  readAvailability,
  stayPriceTotals,
  type InventoryService,
  type RatePlan,
  type RatePlanDeposit,
  type Room,
  type RoomType,
} from "../inventory/index.ts";
import { addDays, parseDate, parseRange } from "../../lib/dates.ts";
import { poolQueryable } from "../../db/queryable.ts";
import { propertyById } from "../properties/index.ts";
import { requireId } from "../../lib/ids.ts";
import { folioBalanceOfReservation } from "../folio/index.ts";
import { checkMoneyBound } from "../../lib/money.ts";
import {
  checkStaffSource,
  depositOfBooking,
  maxNights,
  reservationSources,
  reservationStatuses,
  staffSources,
  type Actor,
  type Reservation,
  type ReservationService,
  type ReservationSource,
  type ReservationStatus,
} from "../reservations/index.ts";

interface OptionsQuery {
  arrivalDate?: string | undefined;
  departureDate?: string | undefined;
  adults?: number | undefined;
  children?: number | undefined;
}

interface RateQuote {
  roomTypeId: string;
  ratePlanId: string;
  totalMinor: bigint;
  available: boolean;
  /** What a booking of the stay made on the business date owes as a deposit; absent when the plan asks none. */
  deposit?: { amountMinor: bigint; dueDate: string; rule: RatePlanDeposit };
}

interface ReservationOptions {
  currency: string;
  amountScale: number;
  roomTypes: RoomType[];
  ratePlans: RatePlan[];
  rooms: Room[];
  boardTypes: readonly string[];
  sources: readonly string[];
  quotes: RateQuote[];
}

/** The spec's mobile create-reservation request (one room). */
interface MobileCreateInput {
  holderName: string;
  arrivalDate: string;
  departureDate: string;
  roomTypeId: string;
  ratePlanId: string;
  adults: number;
  totalMinor: bigint | undefined;
  currency: string;
  /** Charge totalMinor although it differs from the daily prices (see CreateReservationInput.priceOverride). */
  priceOverride?: boolean | undefined;
  /** Accept a sold-out stay as an overbooking (see CreateReservationInput.overbook). */
  overbook?: boolean | undefined;
  children?: number | undefined;
  roomId?: string | undefined;
  boardType?: string | undefined;
  source?: string | undefined;
  status?: string | undefined;
  notes?: string | undefined;
  /** A TENTATIVE reservation's option (see CreateReservationInput.optionUntil). */
  optionUntil?: Date | undefined;
}

interface MobileListInput {
  from?: string | undefined;
  to?: string | undefined;
  status?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

export interface MobileReservations {
  options(propertyId: string, query: OptionsQuery): Promise<ReservationOptions>;
  create(actor: Actor, input: MobileCreateInput): Promise<Reservation>;
  list(
    actor: Actor,
    input: MobileListInput,
  ): Promise<{ reservations: Reservation[]; nextCursor: string; hasMore: boolean }>;
  get(actor: Actor, reservationId: string): Promise<{ reservation: Reservation; folioBalanceMinor: bigint | null }>;
  reinstate(actor: Actor, reservationId: string): Promise<Reservation>;
}

/** The reservations service's room-line fields as the mobile request names them (it has one room, no `rooms`). */
const mobileFields: Record<string, string> = {
  "rooms[0].roomTypeId": "roomTypeId",
  "rooms[0].ratePlanId": "ratePlanId",
  "rooms[0].roomId": "roomId",
  "rooms[0].adults": "adults",
  "rooms[0].children": "children",
  "rooms[0].amountMinor": "totalMinor",
};

/** Runs a reservations-service call, renaming the fields its errors name to the mobile body's. */
async function inMobileTerms<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof AppError) || err.details.length === 0) throw err;
    let message = err.message;
    const details = err.details.map((d) => {
      const field = mobileFields[d.field] ?? d.field;
      if (field !== d.field) message = message.split(d.field).join(field);
      return { ...d, field };
    });
    throw new AppError(err.code, message, {
      details,
      headers: err.headers,
      cause: err,
      ...(err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
    });
  }
}

function required(field: string, value: string): string {
  if (value.trim() === "") throw invalidField(field, "required");
  return value;
}

function count(field: string, value: number | undefined, fallback: number, min: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < min || n > 20) throw invalidField(field, `${min} to 20`);
  return n;
}

/** The deposit a booking of the stay made on `businessDate` would owe (the reservations service's own rule). */
function quoteDeposit(
  rule: RatePlanDeposit,
  price: { total: bigint; firstNight: bigint },
  businessDate: string,
  arrival: string,
): RateQuote["deposit"] {
  const { dueMinor, dueDate } = depositOfBooking(
    [{ deposit: rule, nightlyMinor: [price.firstNight], totalMinor: price.total }],
    businessDate,
    arrival,
  );
  return dueDate === null ? undefined : { amountMinor: dueMinor, dueDate, rule };
}

/**
 * The mobile app's reservation face: options for the create form (with quotes from the daily prices) and the
 * spec's one-room create request on top of the reservations service, which checks prices and availability.
 */
export function createMobileReservations(deps: {
  pool: pg.Pool;
  inventory: InventoryService;
  reservations: ReservationService;
}): MobileReservations {
  const reads = poolQueryable(deps.pool);
  const { inventory, reservations } = deps;

  async function quotes(
    propertyId: string,
    businessDate: string,
    roomTypes: RoomType[],
    ratePlans: RatePlan[],
    q: OptionsQuery,
  ): Promise<RateQuote[]> {
    if (q.arrivalDate === undefined && q.departureDate === undefined) return [];
    if (q.arrivalDate === undefined) throw invalidField("arrivalDate", "required with departureDate");
    if (q.departureDate === undefined) throw invalidField("departureDate", "required with arrivalDate");
    const { from, to, days } = parseRange(q.arrivalDate, q.departureDate, maxNights, ["arrivalDate", "departureDate"]);
    const adults = count("adults", q.adults, 1, 1);
    const guests = adults + count("children", q.children, 0, 0);
    const [availability, prices] = await Promise.all([
      readAvailability(reads, propertyId, from, to),
      // a plan priced by occupancy quotes the adults' price
      stayPriceTotals(reads, propertyId, from, to, adults),
    ]);
    const free = new Map(availability.map((a) => [a.roomTypeId, a.days.every((d) => d.available > 0)]));
    const occupancy = new Map(roomTypes.map((rt) => [rt.id, rt.maxOccupancy]));
    const priced = new Map(
      prices
        .filter((p) => p.nights === days)
        .map((p) => [`${p.ratePlanId}/${p.roomTypeId}`, { total: BigInt(p.total), firstNight: BigInt(p.firstNight) }]),
    );
    const out: RateQuote[] = [];
    for (const rp of ratePlans) {
      for (const roomTypeId of rp.roomTypeIds) {
        const price = priced.get(`${rp.id}/${roomTypeId}`);
        if (price === undefined) continue;
        const deposit = rp.deposit === null ? undefined : quoteDeposit(rp.deposit, price, businessDate, from);
        out.push({
          roomTypeId,
          ratePlanId: rp.id,
          totalMinor: price.total,
          available: (free.get(roomTypeId) ?? false) && guests <= (occupancy.get(roomTypeId) ?? 0),
          ...(deposit === undefined ? {} : { deposit }),
        });
      }
    }
    return out;
  }

  return {
    async options(propertyId, query) {
      const [property, roomTypes, ratePlans, rooms] = await Promise.all([
        propertyById(reads, propertyId),
        inventory.listRoomTypes(propertyId),
        inventory.listRatePlans(propertyId),
        inventory.listRooms(propertyId),
      ]);
      return {
        currency: property.currency,
        amountScale: property.amountScale,
        roomTypes,
        ratePlans,
        rooms,
        boardTypes,
        sources: staffSources,
        quotes: await quotes(propertyId, property.businessDate, roomTypes, ratePlans, query),
      };
    },

    async create(actor, input) {
      required("holderName", input.holderName);
      parseDate("arrivalDate", input.arrivalDate);
      parseDate("departureDate", input.departureDate);
      required("roomTypeId", input.roomTypeId);
      required("ratePlanId", input.ratePlanId);
      required("currency", input.currency);
      if (input.totalMinor === undefined) throw invalidField("totalMinor", "required");
      if (input.totalMinor < 0n) throw invalidField("totalMinor", "must not be negative");
      checkMoneyBound("totalMinor", input.totalMinor);
      const adults = count("adults", input.adults, 1, 1);
      const children = count("children", input.children, 0, 0);
      const source = (input.source ?? "MOBILE") as ReservationSource;
      if (!reservationSources.includes(source)) throw invalidField("source", staffSources.join(", "));
      checkStaffSource(source);
      const status = input.status;
      if (status !== undefined && status !== "TENTATIVE" && status !== "GUARANTEED")
        throw invalidField("status", "TENTATIVE or GUARANTEED");
      if (input.boardType !== undefined) {
        if (!(boardTypes as readonly string[]).includes(input.boardType))
          throw invalidField("boardType", boardTypes.join(", "));
        const rp = await findRatePlan(reads, actor.propertyId, requireId(input.ratePlanId, "Rate plan"));
        if (rp === undefined) throw new AppError("not_found", "Rate plan not found.");
        if (rp.boardType !== input.boardType)
          throw invalidField("boardType", `the rate plan's board type is ${rp.boardType}`, "validation_failed");
      }
      if (input.roomId !== undefined) {
        // Checked again under lock by the assignment; here for a clear answer before anything is written.
        const room = await findRoom(reads, actor.propertyId, requireId(input.roomId, "Room"));
        if (room === undefined) throw new AppError("not_found", "Room not found.");
        if (room.roomTypeId !== input.roomTypeId)
          throw invalidField("roomId", "the room is not of the room type", "validation_failed");
        if (room.status === "OUT_OF_ORDER")
          throw invalidField("roomId", "the room is out of order", "validation_failed");
      }
      const { reservation } = await inMobileTerms(() =>
        reservations.create(actor, {
          source,
          channel: null,
          externalReference: null,
          holderName: input.holderName,
          arrivalDate: input.arrivalDate,
          departureDate: input.departureDate,
          rooms: [
            { roomTypeId: input.roomTypeId, ratePlanId: input.ratePlanId, roomId: input.roomId, adults, children },
          ],
          status,
          notes: input.notes,
          totalMinor: input.totalMinor,
          currency: input.currency,
          priceOverride: input.priceOverride,
          overbook: input.overbook,
          optionUntil: input.optionUntil,
        }),
      );
      return reservation;
    },

    async list(actor, input) {
      const statuses = (input.status ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      for (const s of statuses)
        if (!(reservationStatuses as readonly string[]).includes(s))
          throw invalidField("status", reservationStatuses.join(", "));
      const from = input.from === undefined || input.from === "" ? undefined : parseDate("from", input.from);
      const to = input.to === undefined || input.to === "" ? undefined : parseDate("to", input.to);
      if (from !== undefined && to !== undefined && to < from) throw invalidField("to", "must not be before from");
      return reservations.list(actor, {
        statuses: statuses as ReservationStatus[],
        arrivalFrom: from,
        // inclusive here, exclusive in the service
        arrivalTo: to === undefined ? undefined : addDays(to, 1),
        cursor: input.cursor,
        limit: input.limit === undefined || input.limit === 0 ? 50 : input.limit,
      });
    },

    reinstate: (actor, reservationId) => reservations.reinstate(actor, reservationId),
    async get(actor, reservationId) {
      const reservation = await reservations.get(actor, reservationId);
      const balance = await folioBalanceOfReservation(reads, actor.propertyId, reservation.id);
      return { reservation, folioBalanceMinor: balance ?? null };
    },
  };
}
