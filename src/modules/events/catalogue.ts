/**
 * The event catalogue: for each event type a description, the JSON Schema of its `data` and an example. The
 * payload builders' types are derived from these schemas (EventDataOf), and the OpenAPI `webhooks` section is
 * generated from them, so the documented shape and the sent one cannot drift apart.
 */

const uuid = { type: "string", format: "uuid" } as const;
const date = { type: "string", format: "date" } as const;
const dateTime = { type: "string", format: "date-time" } as const;
const text = { type: "string" } as const;
const count = { type: "integer", minimum: 0 } as const;

/** Every property listed is required and nothing else may appear. */
function object<P extends Record<string, Schema>>(description: string, properties: P) {
  return {
    type: "object",
    description,
    properties,
    required: Object.keys(properties) as (keyof P & string)[],
    additionalProperties: false,
  } as const;
}

const reservation = object("Reservation data (the fields of the connectivity reservation list); no personal data.", {
  id: uuid,
  code: text,
  status: { type: "string", enum: ["TENTATIVE", "GUARANTEED", "IN_HOUSE", "CHECKED_OUT", "NO_SHOW", "CANCELLED"] },
  source: { type: "string", enum: ["DIRECT", "MOBILE", "PANEL", "CHANNEL", "API"] },
  externalReference: { type: ["string", "null"], description: "The channel's booking reference; null when none." },
  channel: { type: ["string", "null"] },
  arrivalDate: date,
  departureDate: date,
  adults: count,
  children: count,
  roomTypes: { type: "array", items: text, description: "Distinct room type codes, in code order." },
  cancelledAt: { type: ["string", "null"], format: "date-time" },
  createdAt: dateTime,
  updatedAt: dateTime,
});

const roomLine = object("Room-line data: one room of a reservation; no guest name.", {
  reservationId: uuid,
  reservationCode: text,
  externalReference: { type: ["string", "null"] },
  reservationRoomId: uuid,
  roomNumber: text,
  roomTypeCode: text,
  arrivalDate: date,
  departureDate: date,
  adults: count,
  children: count,
  checkedInAt: dateTime,
  checkedOutAt: { type: ["string", "null"], format: "date-time" },
});

const payment = object("Payment data; amounts in integer minor units with their scale; no personal data.", {
  paymentId: uuid,
  folioId: uuid,
  folioNumber: text,
  reservationId: uuid,
  reservationCode: text,
  amountMinor: { type: "integer" },
  amountScale: { type: "integer" },
  currency: { type: "string", pattern: "^[A-Z]{3}$" },
  methodCode: text,
  methodKind: { type: "string", description: "CASH, CARD, TRANSFER, VOUCHER, CITY_LEDGER or OTHER." },
  isReversal: { type: "boolean" },
  reversedPaymentId: { type: ["string", "null"], format: "uuid" },
  postedAt: dateTime,
});

const invoice = object("Invoice data (E-Arşiv); amounts in integer minor units with their scale; no personal data.", {
  invoiceId: uuid,
  series: { type: ["string", "null"] },
  number: { type: ["string", "null"] },
  type: { type: "string", enum: ["E_ARSIV", "E_FATURA"] },
  status: { type: "string", enum: ["DRAFT", "ISSUED"] },
  issueDate: { type: ["string", "null"], format: "date" },
  netMinor: { type: "integer" },
  taxMinor: { type: "integer" },
  accommodationTaxMinor: { type: "integer" },
  totalMinor: { type: "integer" },
  amountScale: { type: "integer" },
  currency: { type: "string", pattern: "^[A-Z]{3}$" },
  folioId: uuid,
  folioNumber: text,
  reservationId: uuid,
});

const availability = object(
  "A hint that availability changed in a date range; read the current numbers from the availability endpoint.",
  {
    from: date,
    to: date,
    toExclusive: { type: "boolean", const: true },
    roomTypes: { type: "array", items: text },
    reason: {
      type: "string",
      enum: ["reservation", "room_block", "out_of_order", "inventory", "rate", "restriction", "allotment"],
    },
  },
);

const webhookTest = object("Sent by the panel's test button.", { endpointId: uuid, message: text });

const reservationExample = {
  id: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90",
  code: "R7K2M9",
  status: "GUARANTEED",
  source: "CHANNEL",
  externalReference: "BK-123",
  channel: "Booking.com",
  arrivalDate: "2027-01-10",
  departureDate: "2027-01-12",
  adults: 2,
  children: 0,
  roomTypes: ["DBL"],
  cancelledAt: null,
  createdAt: "2026-12-01T10:15:00.000Z",
  updatedAt: "2026-12-01T10:15:00.000Z",
} as const;
const roomLineExample = {
  reservationId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90",
  reservationCode: "R7K2M9",
  externalReference: "BK-123",
  reservationRoomId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a91",
  roomNumber: "101",
  roomTypeCode: "DBL",
  arrivalDate: "2027-01-10",
  departureDate: "2027-01-12",
  adults: 2,
  children: 0,
  checkedInAt: "2027-01-10T14:02:11.000Z",
  checkedOutAt: null,
} as const;

/**
 * Every event type with its `data` schema, an example of it, and what it means in English (`summary`: the
 * OpenAPI document and the API) and Turkish (`summaryTr`: the panel in Turkish).
 */
export const eventCatalogue = {
  "reservation.created": {
    summary: "A reservation was created (any source).",
    summaryTr: "Bir rezervasyon oluşturuldu (her kaynaktan).",
    data: reservation,
    example: reservationExample,
  },
  "reservation.updated": {
    summary: "A reservation changed: dates, guests, rooms, status (check-in and check-out too).",
    summaryTr: "Bir rezervasyon değişti: tarihler, kişiler, odalar, durum (giriş ve çıkış da).",
    data: reservation,
    example: { ...reservationExample, status: "IN_HOUSE", updatedAt: "2027-01-10T14:02:11.000Z" },
  },
  "reservation.cancelled": {
    summary: "A reservation was cancelled.",
    summaryTr: "Bir rezervasyon iptal edildi.",
    data: reservation,
    example: {
      ...reservationExample,
      status: "CANCELLED",
      cancelledAt: "2026-12-05T08:00:00.000Z",
      updatedAt: "2026-12-05T08:00:00.000Z",
    },
  },
  "guest.checked_in": {
    summary: "A room of a reservation was checked in.",
    summaryTr: "Bir rezervasyonun bir odası için giriş (check-in) yapıldı.",
    data: roomLine,
    example: roomLineExample,
  },
  "guest.checked_out": {
    summary: "A room of a reservation was checked out.",
    summaryTr: "Bir rezervasyonun bir odası için çıkış (check-out) yapıldı.",
    data: roomLine,
    example: { ...roomLineExample, checkedOutAt: "2027-01-12T10:30:00.000Z" },
  },
  "folio.payment_posted": {
    summary: "A payment (or the reversal of one) was posted to a folio.",
    summaryTr: "Bir folyoya ödeme (ya da bir ödemenin iptali) işlendi.",
    data: payment,
    example: {
      paymentId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a92",
      folioId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a93",
      folioNumber: "F-000042",
      reservationId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90",
      reservationCode: "R7K2M9",
      amountMinor: 250000,
      amountScale: 100,
      currency: "TRY",
      methodCode: "VISA",
      methodKind: "CARD",
      isReversal: false,
      reversedPaymentId: null,
      postedAt: "2027-01-12T10:25:00.000Z",
    },
  },
  "invoice.issued": {
    summary: "An invoice was issued (its number is final).",
    summaryTr: "Bir fatura kesildi (numarası kesinleşti).",
    data: invoice,
    example: {
      invoiceId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a94",
      series: "EAR",
      number: "EAR2027000000042",
      type: "E_ARSIV",
      status: "ISSUED",
      issueDate: "2027-01-12",
      netMinor: 208333,
      taxMinor: 20833,
      accommodationTaxMinor: 4167,
      totalMinor: 233333,
      amountScale: 100,
      currency: "TRY",
      folioId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a93",
      folioNumber: "F-000042",
      reservationId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90",
    },
  },
  "availability.changed": {
    summary:
      "Availability changed for some room types and dates (a hint: read the numbers from the availability endpoint).",
    summaryTr:
      "Bazı oda tipleri ve tarihler için müsaitlik değişti (bir ipucu: sayıları müsaitlik uç noktasından okuyun).",
    data: availability,
    example: { from: "2027-01-10", to: "2027-01-12", toExclusive: true, roomTypes: ["DBL"], reason: "reservation" },
  },
  "webhook.test": {
    summary: "The panel's test button (never recorded in the event log; always sent, never subscribed to).",
    summaryTr: "Panelin test düğmesi (olay günlüğüne yazılmaz; her zaman gönderilir, abone olunmaz).",
    data: webhookTest,
    example: {
      endpointId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a95",
      message: "Test event sent from the panel (connection verify).",
    },
  },
} as const;

export type CatalogueType = keyof typeof eventCatalogue;

/** The JSON Schema subset the catalogue uses. */
type Schema =
  | { readonly type: "string" | "integer" | "boolean" | readonly ["string", "null"]; readonly [k: string]: unknown }
  | { readonly type: "array"; readonly items: Schema; readonly [k: string]: unknown }
  | { readonly type: "object"; readonly properties: Readonly<Record<string, Schema>>; readonly [k: string]: unknown };

/** The TypeScript type a schema of the catalogue describes. */
type FromSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { type: readonly ["string", "null"] }
      ? string | null
      : S extends { type: "string" }
        ? string
        : S extends { type: "integer" }
          ? number
          : S extends { type: "boolean" }
            ? boolean
            : S extends { type: "array"; items: infer I }
              ? FromSchema<I>[]
              : S extends { type: "object"; properties: infer P }
                ? { -readonly [K in keyof P]: FromSchema<P[K]> }
                : never;

/** What the payload builder of an event type must return. */
export type EventDataOf<T extends CatalogueType> = FromSchema<(typeof eventCatalogue)[T]["data"]>;
