// Rates: the property's rate plans, and a calendar grid per room type x day (rooms sold and free, the nightly price
// of each rate plan and its restrictions) read through InventoryService.GetAri (all its pages) and GetAvailability.
// Staff holding rates.manage set restrictions over a range and weekdays through SetRestrictions.
import { useState } from "preact/hooks";
import { can, formatMoney, problemOf, type Problem, type Signed } from "../../api.ts";
import { lookup, useI18n, type Lang } from "../../i18n.ts";
import {
  BoardType,
  type AriRoomType,
  type AvailabilityDay,
} from "../../../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ErrorBox, PageTitle, useLoad } from "../common.tsx";
import { nightDates, nightsBetween, propertyCode } from "./shared.tsx";

/** Days the grid shows from its first date. */
const gridDays = 60;

const dayHead = (lang: Lang, date: string): string =>
  new Intl.DateTimeFormat(lang === "tr" ? "tr-TR" : "en-GB", {
    weekday: "short",
    day: "numeric",
    month: "short",
    timeZone: "UTC",
  }).format(new Date(`${date}T00:00:00Z`));

const weekdayName = (lang: Lang, iso: number): string =>
  // 2024-01-01 is a Monday
  new Intl.DateTimeFormat(lang === "tr" ? "tr-TR" : "en-GB", { weekday: "long", timeZone: "UTC" }).format(
    new Date(Date.UTC(2024, 0, iso)),
  );

type Tri = "keep" | "yes" | "no";
const triValue = (v: Tri): boolean | undefined => (v === "keep" ? undefined : v === "yes");

export function Rates({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const code = propertyCode(signed);
  const manage = can(signed, "rates.manage");
  const [from, setFrom] = useState("");
  const data = useLoad(async () => {
    const [types, plans, dash] = await Promise.all([
      signed.inventory.listRoomTypes({ propertyCode: code, limit: 500 }),
      signed.inventory.listRatePlans({ propertyCode: code, limit: 500 }),
      signed.mobile.getDashboard({}),
    ]);
    return { types: types.roomTypes, plans: plans.ratePlans, businessDate: dash.businessDate };
  }, []);
  const start = from || data.data?.businessDate || "";
  const dates = start === "" ? [] : nightDates(start, gridDays);
  const end = dates.length > 0 ? nightDates(dates[dates.length - 1]!, 2)[1]! : "";
  const grid = useLoad(async () => {
    if (start === "") return undefined;
    const roomTypes: AriRoomType[] = [];
    let cursor = "";
    const money = { currency: "", scale: 100 };
    // the ARI read comes in pages of whole room types on a large property
    for (;;) {
      const page = await signed.inventory.getAri({ propertyCode: code, from: start, to: end, cursor });
      roomTypes.push(...page.roomTypes);
      money.currency = page.currency;
      money.scale = page.amountScale;
      if (!page.hasMore || page.nextCursor === "") break;
      cursor = page.nextCursor;
    }
    const avail = await signed.inventory.getAvailability({ propertyCode: code, from: start, to: end });
    const sold = new Map<string, Map<string, AvailabilityDay>>();
    for (const rt of avail.roomTypes) sold.set(rt.roomTypeId, new Map(rt.days.map((d) => [d.date, d])));
    return { roomTypes, ...money, sold };
  }, [start]);

  // the edit form
  const [planId, setPlanId] = useState("");
  const [typeId, setTypeId] = useState("");
  const [editFrom, setEditFrom] = useState("");
  const [editTo, setEditTo] = useState("");
  const [weekdays, setWeekdays] = useState<number[]>([]);
  const [minStay, setMinStay] = useState("");
  const [maxStay, setMaxStay] = useState("");
  const [cta, setCta] = useState<Tri>("keep");
  const [ctd, setCtd] = useState<Tri>("keep");
  const [stop, setStop] = useState<Tri>("keep");
  const [done, setDone] = useState("");
  const [problem, setProblem] = useState<Problem | undefined>();

  async function apply(e: Event) {
    e.preventDefault();
    setProblem(undefined);
    setDone("");
    const plan = planId || data.data?.plans[0]?.id || "";
    const nights = (v: string) => (v.trim() === "" ? undefined : Number(v));
    try {
      const out = await signed.inventory.setRestrictions({
        propertyCode: code,
        ratePlanIds: [plan],
        roomTypeIds: typeId === "" ? [] : [typeId],
        from: editFrom,
        // the form asks for the last night; the RPC takes the end exclusive
        to: editTo === "" ? "" : nightDates(editTo, 2)[1]!,
        weekdays,
        minStay: nights(minStay),
        maxStay: nights(maxStay),
        closedToArrival: triValue(cta),
        closedToDeparture: triValue(ctd),
        stopSell: triValue(stop),
      });
      setDone(t("ariApplied", { n: out.cells }));
      grid.reload();
    } catch (err) {
      setProblem(problemOf(err));
    }
  }

  const typeName = (id: string) => data.data?.types.find((x) => x.id === id)?.code ?? id;
  const money = (minor: bigint) => formatMoney(lang, minor, grid.data?.scale ?? 100, grid.data?.currency ?? "");
  return (
    <section>
      <PageTitle>{t("ratesTitle")}</PageTitle>
      <p class="small">{t("ratesNote")}</p>
      <ErrorBox problem={data.problem} />
      {data.loading && <p>{t("loading")}</p>}
      {data.data && data.data.plans.length === 0 && <p>{t("ratesNone")}</p>}
      {data.data && data.data.plans.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={t("ratesTitle")}>
          <table id="rate-plans">
            <thead>
              <tr>
                <th scope="col">{t("colRatePlan")}</th>
                <th scope="col">{t("colBoard")}</th>
                <th scope="col">{t("colRoomTypes")}</th>
                <th scope="col">{t("colPolicy")}</th>
              </tr>
            </thead>
            <tbody>
              {data.data.plans.map((p) => (
                <tr key={p.id}>
                  <td>
                    <strong>{p.code}</strong> {p.name}
                  </td>
                  <td>{lookup(lang, `board_${BoardType[p.boardType]}`) ?? BoardType[p.boardType]}</td>
                  <td>{p.roomTypeIds.map(typeName).join(", ")}</td>
                  <td>
                    {p.cancellationPolicy === undefined
                      ? t("policyFree")
                      : t("policyUntil", { h: p.cancellationPolicy.freeUntilHours })}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2 id="ari-h">{t("ariTitle")}</h2>
      <p class="small">{t("ariNote", { days: gridDays })}</p>
      <label for="ari-from">{t("ariFrom")}</label>{" "}
      <input id="ari-from" type="date" value={start} onChange={(e) => setFrom(e.currentTarget.value)} />
      <ErrorBox problem={grid.problem} />
      {grid.loading && <p>{t("loading")}</p>}
      {grid.data && grid.data.roomTypes.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="ari-h">
          <table id="ari-grid" class="ari-grid">
            <thead>
              <tr>
                <th scope="col">{t("ariColRow")}</th>
                {dates.map((d) => (
                  <th scope="col" key={d}>
                    {dayHead(lang, d)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {grid.data.roomTypes.map((rt) => {
                const days = grid.data!.sold.get(rt.roomTypeId);
                return [
                  <tr key={rt.roomTypeId} class="ari-avail">
                    <th scope="row">{t("ariAvailRow", { type: rt.code })}</th>
                    {dates.map((d) => {
                      const a = days?.get(d);
                      return (
                        <td key={d} data-cell={`${rt.code}:avail:${d}`}>
                          {a === undefined ? "" : t("ariAvail", { free: a.available, sold: a.sold })}
                        </td>
                      );
                    })}
                  </tr>,
                  ...rt.ratePlans.map((rp) => (
                    <tr key={`${rt.roomTypeId}-${rp.ratePlanId}`}>
                      <th scope="row">
                        {rt.code} · {rp.code}
                      </th>
                      {rp.days.map((day) => {
                        const marks = [
                          day.minStay !== undefined ? t("ariMin", { n: day.minStay }) : "",
                          day.maxStay !== undefined ? t("ariMax", { n: day.maxStay }) : "",
                          day.closedToArrival ? t("ariCta") : "",
                          day.closedToDeparture ? t("ariCtd") : "",
                          day.stopSell ? t("ariStop") : "",
                        ].filter((m) => m !== "");
                        return (
                          <td key={day.date} data-cell={`${rt.code}:${rp.code}:${day.date}`}>
                            {day.priceMinor === undefined ? t("ariNoPrice") : money(day.priceMinor)}
                            {marks.length > 0 && <span class="ari-marks small">{marks.join(", ")}</span>}
                          </td>
                        );
                      })}
                    </tr>
                  )),
                ];
              })}
            </tbody>
          </table>
        </div>
      )}
      {manage && data.data && data.data.plans.length > 0 && (
        <form id="ari-edit" class="stack" onSubmit={apply} aria-labelledby="ari-edit-h" noValidate>
          <h2 id="ari-edit-h">{t("ariEditTitle")}</h2>
          <label for="ari-plan">{t("colRatePlan")}</label>
          <select
            id="ari-plan"
            value={planId || data.data.plans[0]!.id}
            onChange={(e) => setPlanId(e.currentTarget.value)}
          >
            {data.data.plans.map((p) => (
              <option key={p.id} value={p.id}>
                {p.code} {p.name}
              </option>
            ))}
          </select>
          <label for="ari-type">{t("ariRoomType")}</label>
          <select id="ari-type" value={typeId} onChange={(e) => setTypeId(e.currentTarget.value)}>
            <option value="">{t("ariAllTypes")}</option>
            {data.data.types.map((x) => (
              <option key={x.id} value={x.id}>
                {x.code} {x.name}
              </option>
            ))}
          </select>
          <label for="ari-edit-from">{t("ariEditFrom")}</label>
          <input id="ari-edit-from" type="date" value={editFrom} onChange={(e) => setEditFrom(e.currentTarget.value)} />
          <label for="ari-edit-to">{t("ariEditTo")}</label>
          <input id="ari-edit-to" type="date" value={editTo} onChange={(e) => setEditTo(e.currentTarget.value)} />
          {editFrom !== "" && editTo !== "" && nightsBetween(editFrom, editTo) >= 0 && (
            <p class="small">{t("ariNights", { n: nightsBetween(editFrom, editTo) + 1 })}</p>
          )}
          <fieldset class="filters">
            <legend>{t("ariWeekdays")}</legend>
            {[1, 2, 3, 4, 5, 6, 7].map((w) => (
              <label key={w} class="inline">
                <input
                  type="checkbox"
                  id={`ari-wd-${w}`}
                  checked={weekdays.includes(w)}
                  onChange={(e) =>
                    setWeekdays((ws) => (e.currentTarget.checked ? [...ws, w].sort() : ws.filter((x) => x !== w)))
                  }
                />{" "}
                {weekdayName(lang, w)}
              </label>
            ))}
          </fieldset>
          <label for="ari-min">{t("ariMinStay")}</label>
          <input id="ari-min" inputMode="numeric" value={minStay} onInput={(e) => setMinStay(e.currentTarget.value)} />
          <label for="ari-max">{t("ariMaxStay")}</label>
          <input id="ari-max" inputMode="numeric" value={maxStay} onInput={(e) => setMaxStay(e.currentTarget.value)} />
          {(
            [
              ["ari-cta", t("ariCtaLabel"), cta, setCta],
              ["ari-ctd", t("ariCtdLabel"), ctd, setCtd],
              ["ari-stop", t("ariStopLabel"), stop, setStop],
            ] as const
          ).map(([id, label, value, set]) => [
            <label key={`${id}-l`} for={id}>
              {label}
            </label>,
            <select key={id} id={id} value={value} onChange={(e) => set(e.currentTarget.value as Tri)}>
              <option value="keep">{t("ariKeep")}</option>
              <option value="yes">{t("ariYes")}</option>
              <option value="no">{t("ariNo")}</option>
            </select>,
          ])}
          <button type="submit" class="primary" id="ari-apply">
            {t("ariApply")}
          </button>
          <ErrorBox problem={problem} />
        </form>
      )}
      <p role="status" id="ari-done" class="result">
        {done}
      </p>
    </section>
  );
}
