import { AppError, type FieldViolation } from "../../../errors.ts";
import { currencyScale } from "../../../lib/money.ts";
import { attr, child, children, el, minorUnits, parseOta, type XmlNode } from "./xml.ts";
import { rs, warningsXml } from "./res-notif.ts";

/** One ARI change as UpdateAri takes it (provider codes; `to` exclusive). */
export interface OtaAriChange {
  roomTypeCode: string;
  ratePlanCode: string;
  from: string;
  to: string;
  weekdays: number[];
  priceMinor?: bigint;
  occupancyPrices?: { adults: number; priceMinor: bigint }[];
  minStay?: number;
  maxStay?: number;
  closedToArrival?: boolean;
  closedToDeparture?: boolean;
  stopSell?: boolean;
  availabilityCap?: number;
}

export interface AriNotifHead {
  echoToken: string;
  /** What was read but not applied (said back as Warnings). */
  warnings: string[];
}

const WEEKDAYS = ["Mon", "Tue", "Weds", "Thur", "Fri", "Sat", "Sun"] as const;
const DAY = 86_400_000;
const isDate = (d: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(d));

/** StatusApplicationControl -> codes, [from, to) (OpenTravel's End is inclusive) and ISO weekdays. */
function control(sac: XmlNode | undefined, where: string, v: FieldViolation[]) {
  const start = attr(sac, "Start");
  const end = attr(sac, "End");
  if (!isDate(start)) v.push({ field: `${where}/StatusApplicationControl/@Start`, reason: "must be a date" });
  if (!isDate(end)) v.push({ field: `${where}/StatusApplicationControl/@End`, reason: "must be a date" });
  const weekdays = WEEKDAYS.flatMap((d, i) => (["true", "1"].includes(attr(sac, d)) ? [i + 1] : []));
  return {
    roomTypeCode: attr(sac, "InvTypeCode") || attr(sac, "InvCode"),
    ratePlanCode: attr(sac, "RatePlanCode"),
    from: start,
    to: isDate(end) ? new Date(Date.parse(end) + DAY).toISOString().slice(0, 10) : end,
    weekdays,
  };
}

function refuse(root: string, v: FieldViolation[]): void {
  if (v.length > 0)
    throw new AppError("validation_failed", `Invalid ${root}: ${v.map((x) => `${x.field} ${x.reason}`).join("; ")}`, {
      details: v,
    });
}

/**
 * OTA_HotelAvailNotifRQ -> UpdateAri changes: RestrictionStatus (Master: stop sell; Arrival/Departure: closed to
 * arrival/departure; Open clears), LengthsOfStay (SetMinLOS/SetMaxLOS, arrival based) and BookingLimit (the
 * availability cap: UpdateAri refuses it without the scope allotment.write, as in JSON).
 */
export function availNotifToChanges(xml: string): { head: AriNotifHead; changes: OtaAriChange[] } {
  const rq = parseOta(xml, "OTA_HotelAvailNotifRQ");
  const head: AriNotifHead = { echoToken: attr(rq, "EchoToken"), warnings: [] };
  const v: FieldViolation[] = [];
  const changes = children(child(rq, "AvailStatusMessages"), "AvailStatusMessage").map((m, i) => {
    const where = `AvailStatusMessages/AvailStatusMessage[${i + 1}]`;
    const change: OtaAriChange = control(child(m, "StatusApplicationControl"), where, v);
    const limit = attr(m, "BookingLimit");
    if (limit !== "") {
      if (/^\d{1,4}$/.test(limit)) change.availabilityCap = Number(limit);
      else v.push({ field: `${where}/@BookingLimit`, reason: "must be a whole number of rooms, 0 to 9999" });
    }
    for (const r of children(m, "RestrictionStatus")) {
      const closed = attr(r, "Status") === "Close";
      if (attr(r, "Status") !== "Close" && attr(r, "Status") !== "Open")
        v.push({ field: `${where}/RestrictionStatus/@Status`, reason: "must be Open or Close" });
      const kind = attr(r, "Restriction") || "Master";
      if (kind === "Arrival") change.closedToArrival = closed;
      else if (kind === "Departure") change.closedToDeparture = closed;
      else if (kind === "Master") change.stopSell = closed;
      else v.push({ field: `${where}/RestrictionStatus/@Restriction`, reason: "must be Master, Arrival or Departure" });
    }
    for (const los of children(child(m, "LengthsOfStay"), "LengthOfStay")) {
      const time = Number(attr(los, "Time"));
      const type = attr(los, "MinMaxMessageType");
      if (!Number.isInteger(time) || time < 0 || (attr(los, "TimeUnit") || "Day") !== "Day")
        v.push({ field: `${where}/LengthsOfStay/LengthOfStay/@Time`, reason: "must be a whole number of days" });
      else if (type === "SetMinLOS") change.minStay = time;
      else if (type === "SetMaxLOS") change.maxStay = time;
      else
        v.push({
          field: `${where}/LengthsOfStay/LengthOfStay/@MinMaxMessageType`,
          reason: "must be SetMinLOS or SetMaxLOS",
        });
    }
    return change;
  });
  if (changes.length === 0)
    v.push({ field: "AvailStatusMessages", reason: "must hold at least one AvailStatusMessage" });
  refuse("OTA_HotelAvailNotifRQ", v);
  return { head, changes };
}

/**
 * OTA_HotelRateAmountNotifRQ -> UpdateAri price changes, in the currency's minor units: a Rate with one
 * BaseByGuestAmt sets the room's price (`priceMinor`; on a plan that prices by occupancy, the price for max
 * occupancy); a Rate with several, each naming its NumberOfGuests (adults), sets the prices per occupancy
 * (`occupancyPrices`; UpdateAri refuses them for a plan that does not price by occupancy, as in JSON).
 */
export function rateAmountNotifToChanges(xml: string): { head: AriNotifHead; changes: OtaAriChange[] } {
  const rq = parseOta(xml, "OTA_HotelRateAmountNotifRQ");
  const head: AriNotifHead = { echoToken: attr(rq, "EchoToken"), warnings: [] };
  const v: FieldViolation[] = [];
  const changes: OtaAriChange[] = [];
  for (const [i, m] of children(child(rq, "RateAmountMessages"), "RateAmountMessage").entries()) {
    const where = `RateAmountMessages/RateAmountMessage[${i + 1}]`;
    const base = control(child(m, "StatusApplicationControl"), where, v);
    for (const [j, rate] of children(child(m, "Rates"), "Rate").entries()) {
      const amounts = children(child(rate, "BaseByGuestAmts"), "BaseByGuestAmt");
      if (amounts.length === 0) {
        v.push({ field: `${where}/Rates/Rate[${j + 1}]/BaseByGuestAmts`, reason: "must hold a BaseByGuestAmt" });
        continue;
      }
      const prices: { adults: number; priceMinor: bigint }[] = [];
      for (const [k, amt] of amounts.entries()) {
        const at = `${where}/Rates/Rate[${j + 1}]/BaseByGuestAmts/BaseByGuestAmt[${k + 1}]`;
        const scale = currencyScale(attr(amt, "CurrencyCode")) ?? 100;
        const minor = minorUnits(
          attr(amt, "AmountAfterTax") || attr(amt, "AmountBeforeTax"),
          attr(amt, "DecimalPlaces"),
          scale,
        );
        const guests = attr(amt, "NumberOfGuests");
        if (minor === undefined) v.push({ field: at, reason: "must carry AmountAfterTax" });
        else if (amounts.length > 1 && !/^\d{1,2}$/.test(guests))
          v.push({ field: `${at}/@NumberOfGuests`, reason: "each of several amounts names its number of adults" });
        else prices.push({ adults: Number(guests), priceMinor: BigInt(minor) });
      }
      if (prices.length !== amounts.length) continue;
      if (amounts.length === 1) changes.push({ ...base, priceMinor: prices[0]!.priceMinor });
      else changes.push({ ...base, occupancyPrices: prices });
    }
  }
  if (changes.length === 0 && v.length === 0)
    v.push({ field: "RateAmountMessages", reason: "must hold at least one RateAmountMessage with a Rate" });
  refuse("OTA_HotelRateAmountNotifRQ", v);
  return { head, changes };
}

/** OTA_HotelAvailNotifRS / OTA_HotelRateAmountNotifRS: Success, and Warnings for what was not applied. */
export function ariNotifSuccess(root: string, head: AriNotifHead, now: Date): string {
  return rs(root, head, now, {}, el("Success", {}) + warningsXml(head.warnings));
}
