import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { requireBinary } from "./prerequisites.ts";

/** OpenTravel 2015B messages for the OTA tests, and their check against the schemas in test/fixtures/ota. */

const XSD_DIR = fileURLToPath(new URL("../fixtures/ota/", import.meta.url));

/** xmllint's verdict on `xml` against the message's own schema ("" when valid, else its complaints). */
export function schemaErrors(xml: string): string {
  const root = /<(OTA_\w+)/.exec(xml)?.[1];
  if (root === undefined) return "no OTA root element";
  try {
    execFileSync(
      requireBinary("xmllint", "libxml2-utils"),
      ["--noout", "--nonet", "--schema", `${XSD_DIR}${root}.xsd`, "-"],
      {
        input: xml,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    return "";
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err);
  }
}

const HEAD = `<?xml version="1.0" encoding="UTF-8"?>`;
const NS = `xmlns="http://www.opentravel.org/OTA/2003/05"`;
const STAMP = `TimeStamp="2026-12-02T10:00:00Z" Version="1.0"`;

interface OtaRoom {
  roomType: string;
  ratePlan: string;
  adults: number;
  children?: number;
  /** One amount per night (two decimals, e.g. "250.00"). */
  nights: string[];
  guests?: string[];
}

export interface OtaBooking {
  status: "Commit" | "Modify" | "Cancel";
  echoToken: string;
  reference: string;
  channel?: string;
  from: string;
  to: string;
  currency?: string;
  rooms: OtaRoom[];
  holder?: [given: string, surname: string];
  remarks?: string[];
  /** A card token, its type and issuer. */
  token?: { token: string; cardCode: string; provider: string };
  /** Extra XML inside PaymentCard (for card-data tests). */
  cardXml?: string;
}

const DAY = 86_400_000;
const addDays = (d: string, n: number): string => new Date(Date.parse(d) + n * DAY).toISOString().slice(0, 10);

function sum(nights: string[]): string {
  return (nights.reduce((a, n) => a + Math.round(Number(n) * 100), 0) / 100).toFixed(2);
}

/** An OTA_HotelResNotifRQ with one HotelReservation. */
export function resNotif(b: OtaBooking): string {
  const currency = b.currency ?? "TRY";
  const guestRph: string[] = [];
  const roomStays = b.rooms
    .map((r) => {
      const rph = (r.guests ?? []).map((name) => {
        guestRph.push(name);
        return String(guestRph.length);
      });
      const rates = r.nights
        .map(
          (n, i) =>
            `<Rate EffectiveDate="${addDays(b.from, i)}" ExpireDate="${addDays(b.from, i + 1)}" RateTimeUnit="Day" UnitMultiplier="1"><Base AmountAfterTax="${n}" CurrencyCode="${currency}"/></Rate>`,
        )
        .join("");
      return (
        `<RoomStay><RoomTypes><RoomType RoomTypeCode="${r.roomType}"/></RoomTypes>` +
        `<RatePlans><RatePlan RatePlanCode="${r.ratePlan}"/></RatePlans>` +
        `<RoomRates><RoomRate RoomTypeCode="${r.roomType}" RatePlanCode="${r.ratePlan}" NumberOfUnits="1"><Rates>${rates}</Rates></RoomRate></RoomRates>` +
        `<GuestCounts><GuestCount AgeQualifyingCode="10" Count="${r.adults}"/>${r.children ? `<GuestCount AgeQualifyingCode="8" Count="${r.children}"/>` : ""}</GuestCounts>` +
        `<TimeSpan Start="${b.from}" End="${b.to}"/>` +
        `<Total AmountAfterTax="${sum(r.nights)}" CurrencyCode="${currency}"/>` +
        (rph.length > 0 ? `<ResGuestRPHs>${rph.join(" ")}</ResGuestRPHs>` : "") +
        `</RoomStay>`
      );
    })
    .join("");
  const holder = b.holder ?? ["Channel", "Guest"];
  const guests = [
    `<ResGuest ResGuestRPH="0" PrimaryIndicator="true"><Profiles><ProfileInfo><Profile><Customer><PersonName><GivenName>${holder[0]}</GivenName><Surname>${holder[1]}</Surname></PersonName></Customer></Profile></ProfileInfo></Profiles></ResGuest>`,
    ...guestRph.map((name, i) => {
      const [given, ...rest] = name.split(" ");
      return `<ResGuest ResGuestRPH="${i + 1}"><Profiles><ProfileInfo><Profile><Customer><PersonName><GivenName>${given}</GivenName><Surname>${rest.join(" ") || given}</Surname></PersonName></Customer></Profile></ProfileInfo></Profiles></ResGuest>`;
    }),
  ].join("");
  const comments =
    (b.remarks ?? []).length === 0
      ? ""
      : `<Comments>${b.remarks!.map((t) => `<Comment><Text>${t}</Text></Comment>`).join("")}</Comments>`;
  const guarantee =
    b.token === undefined && b.cardXml === undefined
      ? ""
      : `<Guarantee GuaranteeType="CC/DC/Voucher"><GuaranteesAccepted><GuaranteeAccepted><PaymentCard CardCode="${b.token?.cardCode ?? "VI"}">${b.cardXml ?? ""}${b.token === undefined ? "" : `<CardNumber Token="${b.token.token}" TokenProviderID="${b.token.provider}"/>`}</PaymentCard></GuaranteeAccepted></GuaranteesAccepted></Guarantee>`;
  const global = `<ResGlobalInfo>${comments}${guarantee}<Total AmountAfterTax="${sum(b.rooms.flatMap((r) => r.nights))}" CurrencyCode="${currency}"/><BasicPropertyInfo HotelCode="HOTEL"/></ResGlobalInfo>`;
  const pos = `<POS><Source><RequestorID Type="22" ID="acme"/><BookingChannel Type="7" Primary="true"><CompanyName>${b.channel ?? "Booking.com"}</CompanyName></BookingChannel></Source></POS>`;
  return (
    `${HEAD}<OTA_HotelResNotifRQ ${NS} EchoToken="${b.echoToken}" ${STAMP} ResStatus="${b.status}">${pos}` +
    `<HotelReservations><HotelReservation CreateDateTime="2026-12-02T10:00:00Z"><UniqueID Type="14" ID="${b.reference}"/>` +
    (b.status === "Cancel" && b.rooms.length === 0 ? "" : `<RoomStays>${roomStays}</RoomStays>`) +
    `<ResGuests>${guests}</ResGuests>${global}</HotelReservation></HotelReservations></OTA_HotelResNotifRQ>`
  );
}

export interface OtaAvail {
  roomType: string;
  ratePlan: string;
  start: string;
  /** Inclusive, as OpenTravel says. */
  end: string;
  stopSell?: boolean;
  closedToArrival?: boolean;
  closedToDeparture?: boolean;
  minStay?: number;
  maxStay?: number;
  /** An availability cap (AvailStatusMessage/@BookingLimit), in a message of its own. */
  bookingLimit?: number;
}

/** One AvailStatusMessage per restriction (OpenTravel allows one RestrictionStatus a message). */
export function availNotif(echoToken: string, items: OtaAvail[]): string {
  const msgs = items
    .flatMap((a) => {
      const control = `<StatusApplicationControl Start="${a.start}" End="${a.end}" InvTypeCode="${a.roomType}" RatePlanCode="${a.ratePlan}"/>`;
      const los = [
        a.minStay === undefined
          ? ""
          : `<LengthOfStay Time="${a.minStay}" TimeUnit="Day" MinMaxMessageType="SetMinLOS"/>`,
        a.maxStay === undefined
          ? ""
          : `<LengthOfStay Time="${a.maxStay}" TimeUnit="Day" MinMaxMessageType="SetMaxLOS"/>`,
      ].join("");
      const restrictions = (
        [
          [a.stopSell, "Master"],
          [a.closedToArrival, "Arrival"],
          [a.closedToDeparture, "Departure"],
        ] as const
      ).flatMap(([v, kind]) =>
        v === undefined ? [] : [`<RestrictionStatus Status="${v ? "Close" : "Open"}" Restriction="${kind}"/>`],
      );
      return [
        ...(los === ""
          ? []
          : [`<AvailStatusMessage>${control}<LengthsOfStay>${los}</LengthsOfStay></AvailStatusMessage>`]),
        ...restrictions.map((r) => `<AvailStatusMessage>${control}${r}</AvailStatusMessage>`),
        ...(a.bookingLimit === undefined
          ? []
          : [`<AvailStatusMessage BookingLimit="${a.bookingLimit}">${control}</AvailStatusMessage>`]),
      ];
    })
    .join("");
  return `${HEAD}<OTA_HotelAvailNotifRQ ${NS} EchoToken="${echoToken}" ${STAMP}><AvailStatusMessages HotelCode="HOTEL">${msgs}</AvailStatusMessages></OTA_HotelAvailNotifRQ>`;
}

export function rateAmountNotif(
  echoToken: string,
  items: {
    roomType: string;
    ratePlan: string;
    start: string;
    end: string;
    amount: string;
    currency?: string;
    /** Prices per number of adults (several BaseByGuestAmt) instead of the one amount for 2 guests. */
    byGuests?: { guests: number; amount: string }[];
  }[],
): string {
  const amt = (amount: string, currency: string, guests: number) =>
    `<BaseByGuestAmt AmountAfterTax="${amount}" CurrencyCode="${currency}" NumberOfGuests="${guests}"/>`;
  const msgs = items
    .map(
      (r) =>
        `<RateAmountMessage><StatusApplicationControl Start="${r.start}" End="${r.end}" InvTypeCode="${r.roomType}" RatePlanCode="${r.ratePlan}"/>` +
        `<Rates><Rate><BaseByGuestAmts>${(r.byGuests ?? [{ guests: 2, amount: r.amount }]).map((g) => amt(g.amount, r.currency ?? "TRY", g.guests)).join("")}</BaseByGuestAmts></Rate></Rates></RateAmountMessage>`,
    )
    .join("");
  return `${HEAD}<OTA_HotelRateAmountNotifRQ ${NS} EchoToken="${echoToken}" ${STAMP}><RateAmountMessages HotelCode="HOTEL">${msgs}</RateAmountMessages></OTA_HotelRateAmountNotifRQ>`;
}
