import { AppError, type FieldViolation } from "../../errors.ts";
import { badDateReason, isCalendarDate } from "../../lib/dates.ts";
import { isIsoCurrency, MAX_MONEY_MINOR, withinMoneyBound } from "../../lib/money.ts";
import { refuseCardData } from "../../lib/card-data.ts";

type ReservationEventType = "NEW" | "MODIFIED" | "CANCELLED";

/** One inbound reservation event in our terms, still carrying the provider's room and rate codes. */
export interface InboundPartnerMessage {
  eventType: ReservationEventType;
  externalReference: string;
  channel: string;
  arrivalDate: string;
  departureDate: string;
  rooms: InboundRoomLine[];
  totalMinor: number;
  currency: string;
  holderName: string;
  notes: string;
  /** The booker's remarks (absent in messages queued before they existed). */
  remarks?: string[];
  /** A payment guarantee by reference; null when the event has none. */
  paymentGuarantee?: { token: string; cardType: string; issuer: string } | null;
}

export interface InboundRoomLine {
  roomTypeCode: string;
  ratePlanCode: string;
  adults: number;
  children: number;
  amountMinor: number;
  /** One price per night in date order (empty: the amount is spread over the nights). */
  nightlyPrices?: { date: string; amountMinor: number }[];
  /** The room's guests by name. */
  guests?: string[];
}

/**
 * How a provider plugs in: it turns its inbound payload into an InboundPartnerMessage. Code translation
 * (provider codes -> ours) is the same for everyone and lives in the mappings, so adding a certified provider
 * means adding an adapter (when its payload differs from the default JSON) and mapping data.
 */
export interface ProviderAdapter {
  parse(payload: Record<string, unknown>): InboundPartnerMessage;
}

/** The default adapter: the JSON body of POST /api/v1/properties/{propertyCode}/reservation-events (CreateReservationEventRequest). */
export const jsonAdapter: ProviderAdapter = {
  parse(p) {
    // before anything else: a message with card data is refused whole, naming the field, never the value
    refuseCardData(p);
    const v: FieldViolation[] = [];
    const str = (name: string, max: number, required: boolean): string => {
      const x = p[name];
      if (x === undefined || x === null || x === "") {
        if (required) v.push({ field: name, reason: "is required" });
        return "";
      }
      if (typeof x !== "string" || x.length > max)
        v.push({ field: name, reason: `must be text of at most ${max} characters` });
      return typeof x === "string" ? x : "";
    };
    const eventType = str("eventType", 20, true);
    if (eventType !== "" && !["NEW", "MODIFIED", "CANCELLED"].includes(eventType))
      v.push({ field: "eventType", reason: "must be NEW, MODIFIED or CANCELLED" });
    const full = eventType !== "CANCELLED";
    const externalReference = str("externalReference", 100, true);
    const channel = str("channel", 64, false);
    const arrivalDate = str("arrivalDate", 10, full);
    const departureDate = str("departureDate", 10, full);
    if (arrivalDate !== "" && !isCalendarDate(arrivalDate)) v.push({ field: "arrivalDate", reason: badDateReason });
    if (departureDate !== "" && !isCalendarDate(departureDate))
      v.push({ field: "departureDate", reason: badDateReason });
    if (isCalendarDate(arrivalDate) && isCalendarDate(departureDate) && arrivalDate >= departureDate)
      v.push({ field: "departureDate", reason: "must be after arrivalDate" });
    const currency = str("currency", 3, full);
    if (currency !== "" && !isIsoCurrency(currency))
      v.push({ field: "currency", reason: "must be an ISO 4217 currency code" });
    const holder = p.holder as { name?: unknown } | undefined;
    const holderName = typeof holder?.name === "string" ? holder.name.trim() : "";
    if (eventType === "NEW" && holderName === "") v.push({ field: "holder.name", reason: "is required" });
    const rawRooms = Array.isArray(p.rooms) ? (p.rooms as Record<string, unknown>[]) : [];
    if (full && (rawRooms.length === 0 || rawRooms.length > 20))
      v.push({ field: "rooms", reason: "must hold 1 to 20 rooms" });
    const rooms = rawRooms.map((r, i) => {
      const code = (k: string): string => {
        const x = r[k];
        if (typeof x !== "string" || x === "" || x.length > 100)
          v.push({ field: `rooms[${i}].${k}`, reason: "is required" });
        return typeof x === "string" ? x : "";
      };
      const count = (k: string, min: number, max: number): number => {
        const x = r[k] ?? 0;
        if (typeof x !== "number" || !Number.isInteger(x) || x < min || x > max)
          v.push({ field: `rooms[${i}].${k}`, reason: `must be an integer from ${min} to ${max}` });
        return typeof x === "number" ? x : 0;
      };
      const amountMinor = count("amountMinor", 0, Number(MAX_MONEY_MINOR));
      const nights = Array.isArray(r.nightlyPrices) ? (r.nightlyPrices as Record<string, unknown>[]) : [];
      const nightlyPrices = nights.map((n, j) => {
        const field = `rooms[${i}].nightlyPrices[${j}]`;
        const date = typeof n.date === "string" ? n.date : "";
        if (!isCalendarDate(date)) v.push({ field: `${field}.date`, reason: badDateReason });
        const amount = n.amountMinor;
        if (typeof amount !== "number" || !Number.isInteger(amount) || amount < 0 || amount > Number(MAX_MONEY_MINOR))
          v.push({ field: `${field}.amountMinor`, reason: `must be an integer from 0 to ${MAX_MONEY_MINOR}` });
        return { date, amountMinor: typeof amount === "number" ? amount : 0 };
      });
      if (nightlyPrices.length > 0) {
        const expected =
          isCalendarDate(arrivalDate) && isCalendarDate(departureDate) ? nightsOf(arrivalDate, departureDate) : [];
        if (nightlyPrices.length !== expected.length || nightlyPrices.some((n, j) => n.date !== expected[j]))
          v.push({
            field: `rooms[${i}].nightlyPrices`,
            reason: "must hold one price for each night of the stay, in date order",
          });
        else if (nightlyPrices.reduce((a, n) => a + n.amountMinor, 0) !== amountMinor)
          v.push({ field: `rooms[${i}].nightlyPrices`, reason: "must add up to the room's amountMinor" });
      }
      const rawGuests = Array.isArray(r.guests) ? (r.guests as unknown[]) : [];
      if (rawGuests.length > 10) v.push({ field: `rooms[${i}].guests`, reason: "at most 10 guests a room" });
      const guests = rawGuests.map((g, j) => {
        const name = typeof g === "object" && g !== null ? (g as { name?: unknown }).name : undefined;
        if (typeof name !== "string" || name.trim() === "" || name.length > 200)
          v.push({ field: `rooms[${i}].guests[${j}].name`, reason: "must be a name of 1 to 200 characters" });
        return typeof name === "string" ? name.trim() : "";
      });
      return {
        roomTypeCode: code("roomTypeCode"),
        ratePlanCode: code("ratePlanCode"),
        adults: count("adults", 1, 10),
        children: count("children", 0, 10),
        amountMinor,
        ...(nightlyPrices.length > 0 ? { nightlyPrices } : {}),
        ...(guests.length > 0 ? { guests } : {}),
      };
    });
    const totalMinor = typeof p.totalMinor === "number" ? p.totalMinor : 0;
    if (full && (!withinMoneyBound(totalMinor) || totalMinor < 0))
      v.push({ field: "totalMinor", reason: `must be an integer from 0 to ${MAX_MONEY_MINOR} (the money bound)` });
    if (full && rooms.length > 0 && rooms.reduce((a, r) => a + r.amountMinor, 0) !== totalMinor)
      v.push({ field: "totalMinor", reason: "must equal the sum of rooms[].amountMinor" });
    const notes = str("notes", 2000, false);
    const rawRemarks = Array.isArray(p.remarks) ? (p.remarks as unknown[]) : [];
    if (rawRemarks.length > 20) v.push({ field: "remarks", reason: "at most 20 remarks" });
    const remarks = rawRemarks.map((x, i) => {
      if (typeof x !== "string" || x.trim() === "" || x.length > 1000)
        v.push({ field: `remarks[${i}]`, reason: "must be text of 1 to 1000 characters" });
      return typeof x === "string" ? x.trim() : "";
    });
    const g = p.paymentGuarantee as Record<string, unknown> | undefined | null;
    let paymentGuarantee: InboundPartnerMessage["paymentGuarantee"] = null;
    if (g !== undefined && g !== null && (g.token !== "" || g.cardType !== "")) {
      const text = (k: string, max: number, required: boolean): string => {
        const x = g[k] ?? "";
        if (typeof x !== "string" || (required && x.trim() === "") || x.length > max)
          v.push({
            field: `paymentGuarantee.${k}`,
            reason: `must be text of ${required ? 1 : 0} to ${max} characters`,
          });
        return typeof x === "string" ? x.trim() : "";
      };
      paymentGuarantee = {
        token: text("token", 200, true),
        cardType: text("cardType", 32, true),
        issuer: text("issuer", 64, false),
      };
    }
    if (v.length > 0)
      throw new AppError(
        "validation_failed",
        `Invalid reservation event: ${v.map((x) => `${x.field} ${x.reason}`).join("; ")}`,
        { details: v },
      );
    return {
      eventType: eventType as ReservationEventType,
      externalReference,
      channel,
      arrivalDate,
      departureDate,
      rooms,
      totalMinor,
      currency,
      holderName,
      notes,
      remarks,
      paymentGuarantee,
    };
  },
};

/** The nights of [arrival, departure) as dates. */
function nightsOf(arrival: string, departure: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(arrival); t < Date.parse(departure) && out.length <= 60; t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** Providers with their own payload format register here; everyone else uses the JSON adapter. */
const adapters = new Map<string, ProviderAdapter>();

export function registerAdapter(provider: string, adapter: ProviderAdapter): void {
  adapters.set(provider, adapter);
}

export function adapterFor(provider: string): ProviderAdapter {
  return adapters.get(provider) ?? jsonAdapter;
}
