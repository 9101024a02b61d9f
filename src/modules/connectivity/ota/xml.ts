import { XMLParser, XMLValidator } from "fast-xml-parser";
import { AppError } from "../../../errors.ts";

/** Elements that may repeat in the messages we read: always parsed as lists, so one and many look alike. */
const LISTS = new Set([
  "HotelReservation",
  "RoomStay",
  "RoomType",
  "RatePlan",
  "RoomRate",
  "Rate",
  "GuestCount",
  "ResGuest",
  "ResGuestRPH",
  "ProfileInfo",
  "GivenName",
  "Comment",
  "SpecialRequest",
  "GuaranteeAccepted",
  "AvailStatusMessage",
  "RestrictionStatus",
  "LengthOfStay",
  "RateAmountMessage",
  "BaseByGuestAmt",
  "Text",
  "UniqueID",
]);

/*
 * DTDs are refused before the parser sees the body: no DOCTYPE means no entity declarations, so no external entity
 * (XXE) is ever fetched and no entity is ever expanded (billion laughs). Only the five predefined entities and
 * character references are decoded. Namespace prefixes are dropped (`ota:RoomStay` reads as `RoomStay`).
 */
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  htmlEntities: false,
  processEntities: true,
  isArray: (name) => LISTS.has(name),
});

export type XmlNode = Record<string, unknown>;

/** Refused with 400 invalid_argument: a DTD or entity declaration, a malformed document, or another root. */
export function parseOta(xml: string, root: string): XmlNode {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml))
    throw new AppError(
      "invalid_argument",
      "XML with a DOCTYPE or entity declarations is not accepted (no DTDs, no entities).",
      { details: [{ field: "", reason: "DOCTYPE and ENTITY declarations are refused" }] },
    );
  const valid = XMLValidator.validate(xml, { allowBooleanAttributes: false });
  if (valid !== true)
    throw new AppError("invalid_argument", `Malformed XML: ${valid.err.msg} (line ${valid.err.line}).`, {
      details: [{ field: "", reason: "malformed XML" }],
    });
  let doc: XmlNode;
  try {
    doc = parser.parse(xml) as XmlNode;
  } catch (err) {
    throw new AppError("invalid_argument", `Malformed XML: ${(err as Error).message}`, {
      details: [{ field: "", reason: "malformed XML" }],
    });
  }
  const top = doc[root];
  if (top === undefined || typeof top !== "object" || top === null)
    throw new AppError("invalid_argument", `The document's root element must be ${root}.`, {
      details: [{ field: "", reason: `root element must be ${root}` }],
    });
  return top as XmlNode;
}

/** Child element (the first when it repeats). */
export function child(node: unknown, name: string): XmlNode | undefined {
  if (node === null || typeof node !== "object") return undefined;
  const v = (node as XmlNode)[name];
  const first = Array.isArray(v) ? v[0] : v;
  if (first === undefined || first === null) return undefined;
  return typeof first === "object" ? (first as XmlNode) : { "#text": first };
}

/** Child elements as a list (none: empty). */
export function children(node: unknown, name: string): XmlNode[] {
  if (node === null || typeof node !== "object") return [];
  const v = (node as XmlNode)[name];
  const list = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return list.map((x) => (typeof x === "object" && x !== null ? (x as XmlNode) : { "#text": x }));
}

/** Follows a path of child elements (the first of each). */
export function path(node: unknown, ...names: string[]): XmlNode | undefined {
  let cur: XmlNode | undefined = node as XmlNode | undefined;
  for (const n of names) cur = child(cur, n);
  return cur;
}

export function attr(node: XmlNode | undefined, name: string): string {
  const v = node?.[`@${name}`];
  return typeof v === "string" ? v.trim() : "";
}

export function text(node: XmlNode | undefined): string {
  if (node === undefined) return "";
  const v = node["#text"];
  return typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "";
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);
}

/** An element with attributes (undefined and empty ones left out) and inner XML. */
export function el(name: string, attrs: Record<string, string | number | undefined>, inner = ""): string {
  const a = Object.entries(attrs)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join("");
  return inner === "" ? `<${name}${a}/>` : `<${name}${a}>${inner}</${name}>`;
}

/**
 * An amount in minor units of `scale` (100 for two decimals). OpenTravel amounts are decimals; with DecimalPlaces
 * an integer amount carries that many implied decimals (Amount="20300" DecimalPlaces="2" is 203.00).
 */
export function minorUnits(amount: string, decimalPlaces: string, scale: number): number | undefined {
  if (!/^\d{1,15}(\.\d{1,6})?$/.test(amount)) return undefined;
  const places = Math.round(Math.log10(scale));
  let [whole, frac = ""] = amount.split(".") as [string, string?];
  if (frac === "" && /^\d$/.test(decimalPlaces) && Number(decimalPlaces) > 0) {
    const d = Number(decimalPlaces);
    const padded = whole.padStart(d + 1, "0");
    whole = padded.slice(0, -d);
    frac = padded.slice(-d);
  }
  if (frac.length > places && /[1-9]/.test(frac.slice(places))) return undefined;
  const minor = Number(whole) * scale + Number((frac + "0".repeat(places)).slice(0, places) || "0");
  return Number.isSafeInteger(minor) ? minor : undefined;
}
