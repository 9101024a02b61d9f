import type { NewEvent, ReservationEventData, RoomLineEventData } from "../events/index.ts";
import type { Reservation, ReservationSummary, RoomLine } from "./reservation.repository.ts";

/** A reservation as the spec's reservation data (the change feed reads the same shape, ReservationSummary). */
function summaryOf(r: Reservation): ReservationSummary {
  return {
    id: r.id,
    code: r.code,
    status: r.status,
    source: r.source,
    externalReference: r.externalReference,
    channel: r.channel,
    arrivalDate: r.arrivalDate,
    departureDate: r.departureDate,
    adults: r.adults,
    children: r.children,
    roomTypes: roomTypeCodes(r),
    cancelledAt: r.cancelledAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** The spec's reservation data as an event payload (JSON: ISO timestamps; null for no external reference, as on every face). */
function reservationData(r: Reservation): ReservationEventData {
  const s = summaryOf(r);
  return {
    ...s,
    cancelledAt: s.cancelledAt?.toISOString() ?? null,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** Distinct room type codes in code order (as the connectivity reservation list shows them). */
function roomTypeCodes(r: Reservation): string[] {
  return [...new Set(r.rooms.map((l) => l.roomTypeCode))].sort();
}

function roomLineData(r: Reservation, line: RoomLine): RoomLineEventData {
  return {
    reservationId: r.id,
    reservationCode: r.code,
    externalReference: r.externalReference,
    reservationRoomId: line.id,
    roomNumber: line.roomNumber ?? "",
    roomTypeCode: line.roomTypeCode,
    arrivalDate: r.arrivalDate,
    departureDate: r.departureDate,
    adults: line.adults,
    children: line.children,
    checkedInAt: line.checkedInAt?.toISOString() ?? "",
    checkedOutAt: line.checkedOutAt?.toISOString() ?? null,
  };
}

type ReservationEventType = "reservation.created" | "reservation.updated" | "reservation.cancelled";

export function reservationEvent(type: ReservationEventType, r: Reservation, at: Date): NewEvent {
  return { propertyId: r.propertyId, type, occurredAt: at, data: reservationData(r) };
}

export function roomLineEvent(
  type: "guest.checked_in" | "guest.checked_out",
  r: Reservation,
  line: RoomLine,
  at: Date,
): NewEvent {
  return { propertyId: r.propertyId, type, occurredAt: at, data: roomLineData(r, line) };
}

/** Hint that availability moved for these dates and room types (read the numbers from availability); none when nothing moved. */
export function availabilityEvents(
  propertyId: string,
  from: string,
  to: string,
  roomTypes: string[],
  at: Date,
): NewEvent[] {
  if (roomTypes.length === 0 || from >= to) return [];
  return [
    {
      propertyId,
      type: "availability.changed",
      occurredAt: at,
      data: { from, to, toExclusive: true, roomTypes: [...new Set(roomTypes)].sort(), reason: "reservation" },
    },
  ];
}
