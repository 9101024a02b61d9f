import { AppError, type FieldViolation } from "../../errors.ts";
import { badDateReason, isCalendarDate } from "../../lib/dates.ts";
import { isIsoCurrency, MAX_MONEY_MINOR, withinMoneyBound } from "../../lib/money.ts";

export type ReservationEventType = "NEW" | "MODIFIED" | "CANCELLED";

/** One inbound reservation event in our terms, still carrying the provider's room and rate codes. */
export interface InboundPartnerMessage {
  eventType: ReservationEventType;
  externalReference: string;
  channel: string;
  arrivalDate: string;
  departureDate: string;
  rooms: { roomTypeCode: string; ratePlanCode: string; adults: number; children: number; amountMinor: number }[];
  totalMinor: number;
  currency: string;
  holderName: string;
  notes: string;
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
      return {
        roomTypeCode: code("roomTypeCode"),
        ratePlanCode: code("ratePlanCode"),
        adults: count("adults", 1, 10),
        children: count("children", 0, 10),
        amountMinor: count("amountMinor", 0, Number(MAX_MONEY_MINOR)),
      };
    });
    const totalMinor = typeof p.totalMinor === "number" ? p.totalMinor : 0;
    if (full && (!withinMoneyBound(totalMinor) || totalMinor < 0))
      v.push({ field: "totalMinor", reason: `must be an integer from 0 to ${MAX_MONEY_MINOR} (the money bound)` });
    if (full && rooms.length > 0 && rooms.reduce((a, r) => a + r.amountMinor, 0) !== totalMinor)
      v.push({ field: "totalMinor", reason: "must equal the sum of rooms[].amountMinor" });
    const notes = str("notes", 2000, false);
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
    };
  },
};

/** Providers with their own payload format register here; everyone else uses the JSON adapter. */
const adapters = new Map<string, ProviderAdapter>();

export function registerAdapter(provider: string, adapter: ProviderAdapter): void {
  adapters.set(provider, adapter);
}

export function adapterFor(provider: string): ProviderAdapter {
  return adapters.get(provider) ?? jsonAdapter;
}
