// What the front-office pages share: dates of the hotel calendar, status names, the active property.
import type { ComponentChildren } from "preact";
import { can, ReservationSource, ReservationStatus, RoomStatus, type Signed } from "../../api.ts";
import { lookup, useI18n, type Lang, type T } from "../../i18n.ts";
import { PageTitle } from "../common.tsx";

// one formatter per language: making one costs more than formatting, and a list of 500 rows formats 1,000 dates
const dayFormats = new Map<Lang, Intl.DateTimeFormat>();
function dayFormat(lang: Lang): Intl.DateTimeFormat {
  let f = dayFormats.get(lang);
  if (f === undefined) {
    f = new Intl.DateTimeFormat(lang === "tr" ? "tr-TR" : "en-GB", { dateStyle: "medium", timeZone: "UTC" });
    dayFormats.set(lang, f);
  }
  return f;
}

/** A YYYY-MM-DD date of the hotel calendar as people of the language read it (no time zone shift). */
export function formatDay(lang: Lang, date: string): string {
  if (date === "") return "";
  return dayFormat(lang).format(new Date(`${date}T00:00:00Z`));
}

export function nightsBetween(arrival: string, departure: string): number {
  return Math.round((Date.parse(`${departure}T00:00:00Z`) - Date.parse(`${arrival}T00:00:00Z`)) / 86_400_000);
}

/** The dates of the nights from arrival (inclusive) to departure (exclusive). */
export function nightDates(arrival: string, count: number): string[] {
  const start = Date.parse(`${arrival}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
}

function statusName(lang: Lang, s: ReservationStatus): string {
  const name = ReservationStatus[s];
  return lookup(lang, `rs_${name}`) ?? name;
}

export function sourceName(lang: Lang, s: ReservationSource, channel: string | undefined): string {
  const name = lookup(lang, `src_${ReservationSource[s]}`) ?? ReservationSource[s];
  return channel ? `${name} (${channel})` : name;
}

export function roomStatusName(lang: Lang, s: RoomStatus): string {
  return lookup(lang, `rm_${RoomStatus[s]}`) ?? RoomStatus[s];
}

export function StatusPill({ status }: { status: ReservationStatus }) {
  const { lang } = useI18n();
  return <span class={`pill rs_${ReservationStatus[status]}`}>{statusName(lang, status)}</span>;
}

/** The active property's code (the inventory and folio RPCs name the property). */
export function propertyCode(s: Signed): string {
  return s.profile.properties.find((p) => p.id === s.profile.activePropertyId)?.code ?? "";
}

/** A page that needs a permission the user lacks says which one and where, as the server would refuse it. */
export function Needs(props: { signed: Signed; permission: string; title: string; children: ComponentChildren }) {
  const { t } = useI18n();
  if (can(props.signed, props.permission)) return <>{props.children}</>;
  const name = props.signed.profile.properties.find((p) => p.id === props.signed.profile.activePropertyId)?.name;
  return (
    <section>
      <PageTitle>{props.title}</PageTitle>
      <p>{t("noPermissionPage", { permission: props.permission, property: name ?? "" })}</p>
    </section>
  );
}

/** "1.500,50" or "1500.5" in the property's scale as minor units; undefined when it is not an amount. */
export function parseAmount(text: string, scale: number): bigint | undefined {
  const digits = Math.round(Math.log10(scale));
  const m = /^(\d{1,13})(?:[.,](\d+))?$/.exec(text.trim().replace(/[\s.](?=\d{3}(\D|$))/g, ""));
  if (m === null) return undefined;
  const frac = m[2] ?? "";
  if (frac.length > digits) return undefined;
  return BigInt(m[1]!) * BigInt(scale) + BigInt(frac.padEnd(digits, "0") || "0");
}

/** A cancellation fee as people read it: the first night, a percentage of the stay or a fixed amount. */
export function feeText(t: T, policy: { feeKind: string; feeValue: bigint }, money: (m: bigint) => string): string {
  if (policy.feeKind === "FIRST_NIGHT") return t("feeFirstNight");
  if (policy.feeKind === "PERCENT") return t("feePercent", { p: (Number(policy.feeValue) / 100).toString() });
  return money(policy.feeValue);
}
