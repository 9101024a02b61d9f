import { AppError, type FieldViolation } from "../../../errors.ts";
import { currencyScale } from "../../../lib/money.ts";
import { refuseCardData } from "../../../lib/card-data.ts";
import { attr, child, children, el, minorUnits, parseOta, path, text, type XmlNode } from "./xml.ts";

/** ResStatus (the message's, else the reservation's) -> our event type. */
const STATUS: Record<string, "NEW" | "MODIFIED" | "CANCELLED"> = {
  Commit: "NEW",
  Book: "NEW",
  Initiate: "NEW",
  Modify: "MODIFIED",
  Cancel: "CANCELLED",
  Cancelled: "CANCELLED",
};

/** What the RS says back: the request's echo token and reference, for the answer. */
export interface ResNotifHead {
  echoToken: string;
  eventType: "NEW" | "MODIFIED" | "CANCELLED";
  externalReference: string;
  version: string;
}

const DAY = 86_400_000;
const nextDay = (d: string): string => new Date(Date.parse(d) + DAY).toISOString().slice(0, 10);

function invalid(field: string, reason: string): AppError {
  return new AppError("validation_failed", `${field} ${reason}.`, { details: [{ field, reason }] });
}

/**
 * OTA_HotelResNotifRQ (one HotelReservation) -> the CreateReservationEvent request, in the provider's codes (the
 * mappings translate them when the event is applied, as for JSON events). Card data anywhere in the document
 * refuses it (422 naming the element); amounts are read in the currency's minor units.
 */
export function resNotifToEvent(xml: string, propertyCode: string): { head: ResNotifHead; request: object } {
  const rq = parseOta(xml, "OTA_HotelResNotifRQ");
  refuseCardData(rq);
  const reservations = children(child(rq, "HotelReservations"), "HotelReservation");
  if (reservations.length !== 1)
    throw invalid("HotelReservations", "must hold exactly one HotelReservation (send one message per booking)");
  const hr = reservations[0]!;
  const status = attr(rq, "ResStatus") || attr(hr, "ResStatus");
  const eventType = STATUS[status];
  if (eventType === undefined) throw invalid("ResStatus", "must be Commit, Modify or Cancel");
  const ids = children(hr, "UniqueID");
  const externalReference = attr(ids.find((u) => attr(u, "Type") === "14") ?? ids[0], "ID");
  if (externalReference === "") throw invalid("HotelReservation/UniqueID", "must carry the booking's ID");
  const channel =
    text(path(rq, "POS", "Source", "BookingChannel", "CompanyName")) ||
    attr(path(rq, "POS", "Source", "BookingChannel", "CompanyName"), "Code");
  const head = { echoToken: attr(rq, "EchoToken"), eventType, externalReference, version: attr(rq, "Version") };

  const v: FieldViolation[] = [];
  const guests = new Map<string, string>();
  let first = "";
  let primary = "";
  for (const g of children(child(hr, "ResGuests"), "ResGuest")) {
    const name = personName(g);
    if (name === "") continue;
    guests.set(attr(g, "ResGuestRPH"), name);
    first ||= name;
    if (["true", "1"].includes(attr(g, "PrimaryIndicator"))) primary ||= name;
  }
  const holderName = primary || first;
  const global = child(hr, "ResGlobalInfo");
  const remarks = [
    ...children(child(global, "Comments"), "Comment"),
    ...children(child(global, "SpecialRequests"), "SpecialRequest"),
  ]
    .flatMap((c) => [...children(c, "Text").map(text), text(c)])
    .filter((t) => t !== "");
  const card = path(global, "Guarantee", "GuaranteesAccepted", "GuaranteeAccepted", "PaymentCard");
  const token = attr(child(card, "CardNumber"), "Token");
  const paymentGuarantee =
    token === ""
      ? undefined
      : {
          token,
          cardType: attr(card, "CardCode") || attr(card, "CardType"),
          issuer: attr(child(card, "CardNumber"), "TokenProviderID"),
        };

  let arrivalDate = "";
  let departureDate = "";
  let currency = "";
  const rooms = children(child(hr, "RoomStays"), "RoomStay").map((rs, i) => {
    const where = `RoomStays/RoomStay[${i + 1}]`;
    const rate = children(child(rs, "RoomRates"), "RoomRate")[0];
    if (Number(attr(rate, "NumberOfUnits") || "1") !== 1)
      v.push({ field: `${where}/RoomRates/RoomRate/@NumberOfUnits`, reason: "must be 1 (send one RoomStay per room)" });
    const roomTypeCode =
      attr(children(child(rs, "RoomTypes"), "RoomType")[0], "RoomTypeCode") || attr(rate, "RoomTypeCode");
    const ratePlanCode =
      attr(children(child(rs, "RatePlans"), "RatePlan")[0], "RatePlanCode") || attr(rate, "RatePlanCode");
    const span = child(rs, "TimeSpan");
    const start = attr(span, "Start").slice(0, 10);
    const end = attr(span, "End").slice(0, 10);
    if (arrivalDate === "") [arrivalDate, departureDate] = [start, end];
    else if (start !== arrivalDate || end !== departureDate)
      v.push({ field: `${where}/TimeSpan`, reason: "every room of a booking must have the same stay" });
    let adults = 0;
    let children_ = 0;
    for (const gc of children(child(rs, "GuestCounts"), "GuestCount")) {
      const count = Number(attr(gc, "Count") || "0");
      if (attr(gc, "AgeQualifyingCode") === "8" || attr(gc, "AgeQualifyingCode") === "7") children_ += count;
      else adults += count;
    }
    const total = child(rs, "Total");
    currency ||= attr(total, "CurrencyCode");
    const scale = currencyScale(currency) ?? 100;
    const amountOf = (node: XmlNode | undefined, field: string): number => {
      const raw = attr(node, "AmountAfterTax") || attr(node, "AmountBeforeTax");
      const minor = minorUnits(raw, attr(node, "DecimalPlaces"), scale);
      if (minor === undefined) v.push({ field, reason: "must be an amount (AmountAfterTax) in the currency's units" });
      return minor ?? 0;
    };
    const nightlyPrices: { date: string; amountMinor: bigint }[] = [];
    for (const [j, r] of children(child(rate, "Rates"), "Rate").entries()) {
      const amount = BigInt(amountOf(child(r, "Base"), `${where}/RoomRates/RoomRate/Rates/Rate[${j + 1}]/Base`));
      const from = attr(r, "EffectiveDate");
      const to = attr(r, "ExpireDate");
      if (!/^\d{4}-\d{2}-\d{2}$/.test(from)) {
        v.push({ field: `${where}/RoomRates/RoomRate/Rates/Rate[${j + 1}]/@EffectiveDate`, reason: "must be a date" });
        continue;
      }
      // ExpireDate is exclusive (the night of ExpireDate is not in the rate); absent or equal: one night
      for (let d = from; nightlyPrices.length < 60 && (d === from || d < to); d = nextDay(d))
        nightlyPrices.push({ date: d, amountMinor: amount });
    }
    const amountMinor =
      total !== undefined
        ? BigInt(amountOf(total, `${where}/Total`))
        : nightlyPrices.reduce((a, n) => a + n.amountMinor, 0n);
    // 2015B: a list of RPHs as text ("1 2"); older versions: ResGuestRPH elements
    const rphs = child(rs, "ResGuestRPHs");
    const names = [...children(rphs, "ResGuestRPH").map((r) => attr(r, "RPH")), ...text(rphs).split(/\s+/)]
      .map((rph) => guests.get(rph))
      .filter((n): n is string => n !== undefined);
    return {
      roomTypeCode,
      ratePlanCode,
      adults,
      children: children_,
      amountMinor,
      nightlyPrices,
      guests: names.map((name) => ({ name })),
    };
  });
  if (v.length > 0)
    throw new AppError(
      "validation_failed",
      `Invalid OTA_HotelResNotifRQ: ${v.map((x) => `${x.field} ${x.reason}`).join("; ")}`,
      {
        details: v,
      },
    );
  const request = {
    propertyCode,
    eventType,
    externalReference,
    channel,
    arrivalDate,
    departureDate,
    rooms,
    totalMinor: rooms.reduce((a, r) => a + r.amountMinor, 0n),
    currency,
    holder: { name: holderName },
    remarks,
    ...(paymentGuarantee !== undefined ? { paymentGuarantee } : {}),
  };
  return { head, request };
}

function personName(g: XmlNode): string {
  const p = path(g, "Profiles", "ProfileInfo", "Profile", "Customer", "PersonName");
  return [...children(p, "GivenName").map(text), text(child(p, "Surname"))].filter((x) => x !== "").join(" ");
}

const RESPONSE_TYPE = { NEW: "Committed", MODIFIED: "Modified", CANCELLED: "Cancelled" } as const;

/** OTA_HotelResNotifRS with Success, the booking's reference and the hotel's reservation (code and id). */
export function resNotifSuccess(
  head: ResNotifHead,
  now: Date,
  propertyCode: string,
  outcome: { reservationCode: string; reservationId: string } | undefined,
  warnings: string[],
): string {
  const reservation = el(
    "HotelReservation",
    {},
    el("UniqueID", { Type: "14", ID: head.externalReference }) +
      (outcome === undefined
        ? ""
        : el(
            "ResGlobalInfo",
            {},
            el(
              "HotelReservationIDs",
              {},
              el("HotelReservationID", {
                ResID_Type: "14",
                ResID_Value: outcome.reservationCode,
                ResID_Source: "HotelOps",
              }) +
                el("HotelReservationID", {
                  ResID_Type: "14",
                  ResID_Value: outcome.reservationId,
                  ResID_Source: "HotelOps-Id",
                }),
            ) + el("BasicPropertyInfo", { HotelCode: propertyCode }),
          )),
  );
  return rs(
    "OTA_HotelResNotifRS",
    head,
    now,
    { ResResponseType: RESPONSE_TYPE[head.eventType] },
    el("Success", {}) + warningsXml(warnings) + el("HotelReservations", {}, reservation),
  );
}

export function warningsXml(warnings: string[]): string {
  if (warnings.length === 0) return "";
  return el("Warnings", {}, warnings.map((w) => el("Warning", { Type: "3" }, escape(w))).join(""));
}

function escape(s: string): string {
  return s.replace(/[<>&]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;" })[c]!);
}

/** An RS root element with the OpenTravel namespace and the request's EchoToken. */
export function rs(
  root: string,
  head: { echoToken: string; version?: string },
  now: Date,
  attrs: Record<string, string>,
  inner: string,
): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    el(
      root,
      {
        xmlns: "http://www.opentravel.org/OTA/2003/05",
        EchoToken: head.echoToken,
        TimeStamp: now.toISOString(),
        Version: "1.0",
        ...attrs,
      },
      inner,
    )
  );
}

/** OpenTravel error type (List_ErrorWarningType) and code (OTA ERR list) for our error codes. */
const ERROR_KIND: Record<string, [type: string, code: string]> = {
  unauthorized: ["4", "497"],
  forbidden: ["6", "497"],
  partner_not_approved: ["6", "497"],
  not_found: ["3", "392"],
  invalid_argument: ["7", "450"],
  validation_failed: ["3", "450"],
  payload_too_large: ["7", "450"],
  unsupported_media_type: ["7", "450"],
  method_not_allowed: ["7", "450"],
  rate_limited: ["12", "448"],
  idempotency_conflict: ["8", "450"],
  request_in_progress: ["8", "450"],
  unavailable: ["12", "448"],
  rejected: ["3", "450"],
};

/** An RS with Errors: one per detail (its element or field named), else one with the message. */
export function errorsRs(
  root: string,
  head: { echoToken: string },
  now: Date,
  err: { code: string; message: string; details?: readonly FieldViolation[] | undefined },
): string {
  const [type, code] = ERROR_KIND[err.code] ?? ["13", "448"];
  const items =
    err.details !== undefined && err.details.length > 0
      ? err.details.slice(0, 20).map((d) => `${d.field === "" ? "" : `${d.field}: `}${d.reason}`)
      : [err.message];
  return rs(
    root,
    head,
    now,
    {},
    el(
      "Errors",
      {},
      items.map((t) => el("Error", { Type: type, Code: code, ShortText: err.code }, escape(t))).join(""),
    ),
  );
}
