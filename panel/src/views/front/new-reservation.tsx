// A new reservation: the stay and guests first, then every room type x rate plan quoted by the same RPC the mobile
// app uses (MobileService.GetReservationOptions), each with the restrictions that stand in the way (InventoryService
// .GetAri for the stay), its cancellation rule and deposit; the booking goes through CreateMobileReservation with
// source PANEL. A price other than the quote is offered only to staff holding reservations.override_price.
import { useState } from "preact/hooks";
import { can, formatMoney, nextDay, type Signed } from "../../api.ts";
import { lookup, useI18n, type Lang, type T } from "../../i18n.ts";
import { navigate } from "../../router.ts";
import { ErrorBox, PageTitle, useAction } from "../common.tsx";
import { feeText, formatDay, nightsBetween, parseAmount, propertyCode } from "./shared.tsx";

type Options = Awaited<ReturnType<Signed["mobile"]["getReservationOptions"]>>;
type Ari = Awaited<ReturnType<Signed["inventory"]["getAri"]>>;
type AriDay = Ari["roomTypes"][number]["ratePlans"][number]["days"][number];

interface Stay {
  arrival: string;
  departure: string;
  adults: number;
  children: number;
}

/** The restrictions of a rate plan x room type that refuse this stay, as the server would name them. */
function restrictionsOf(t: T, lang: Lang, days: readonly AriDay[], stay: Stay): string[] {
  const nights = nightsBetween(stay.arrival, stay.departure);
  const out: string[] = [];
  const first = days.find((d) => d.date === stay.arrival);
  const last = days.find((d) => d.date === stay.departure);
  const stops = days.filter((d) => d.date < stay.departure && d.stopSell).map((d) => formatDay(lang, d.date));
  if (stops.length > 0) out.push(t("restrStop", { dates: stops.join(", ") }));
  if (first?.closedToArrival) out.push(t("restrCta", { date: formatDay(lang, stay.arrival) }));
  if (last?.closedToDeparture) out.push(t("restrCtd", { date: formatDay(lang, stay.departure) }));
  if (first?.minStay !== undefined && nights < first.minStay) out.push(t("restrMin", { n: first.minStay }));
  if (first?.maxStay !== undefined && nights > first.maxStay) out.push(t("restrMax", { n: first.maxStay }));
  return out;
}

async function quote(signed: Signed, stay: Stay): Promise<{ options: Options; ari: Map<string, AriDay[]> }> {
  const code = propertyCode(signed);
  const options = await signed.mobile.getReservationOptions({
    arrivalDate: stay.arrival,
    departureDate: stay.departure,
    adults: stay.adults,
    children: stay.children,
  });
  const ari = new Map<string, AriDay[]>();
  let cursor = "";
  do {
    const page = await signed.inventory.getAri({
      propertyCode: code,
      from: stay.arrival,
      to: nextDay(stay.departure),
      cursor,
    });
    for (const rt of page.roomTypes)
      for (const rp of rt.ratePlans) ari.set(`${rt.roomTypeId}/${rp.ratePlanId}`, rp.days);
    cursor = page.nextCursor;
  } while (cursor !== "");
  return { options, ari };
}

export function NewReservation({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const [stay, setStay] = useState<Stay>({ arrival: "", departure: "", adults: 2, children: 0 });
  const [quoted, setQuoted] = useState<{ stay: Stay; options: Options; ari: Map<string, AriDay[]> } | undefined>();
  const [choice, setChoice] = useState("");
  const [holder, setHolder] = useState("");
  const [status, setStatus] = useState("GUARANTEED");
  const [notes, setNotes] = useState("");
  const [override, setOverride] = useState(false);
  const [price, setPrice] = useState("");
  const [overbook, setOverbook] = useState(false);
  const [fieldError, setFieldError] = useState("");
  const { busy, problem, setProblem, run } = useAction();

  async function onQuote(e: Event) {
    e.preventDefault();
    const failed = await run(async () => {
      const q = await quote(signed, stay);
      setQuoted({ stay, ...q });
      const first = q.options.quotes.find((x) => x.available) ?? q.options.quotes[0];
      setChoice(first === undefined ? "" : `${first.roomTypeId}/${first.ratePlanId}`);
    });
    if (failed !== undefined) setQuoted(undefined);
  }

  async function onBook(e: Event) {
    e.preventDefault();
    if (quoted === undefined) return;
    setProblem(undefined);
    setFieldError("");
    const chosen = quoted.options.quotes.find((q) => `${q.roomTypeId}/${q.ratePlanId}` === choice);
    if (chosen === undefined) return;
    let total = chosen.totalMinor;
    if (override) {
      const typed = parseAmount(price, quoted.options.amountScale);
      if (typed === undefined) {
        setFieldError(t("amountInvalid"));
        return;
      }
      total = typed;
    }
    await run(async () => {
      const out = await signed.mobile.createMobileReservation({
        holderName: holder,
        arrivalDate: quoted.stay.arrival,
        departureDate: quoted.stay.departure,
        roomTypeId: chosen.roomTypeId,
        ratePlanId: chosen.ratePlanId,
        adults: quoted.stay.adults,
        children: quoted.stay.children,
        totalMinor: total,
        currency: quoted.options.currency,
        source: "PANEL",
        status,
        notes,
        priceOverride: override,
        overbook,
      });
      navigate(`/panel/reservations/${out.reservation?.id ?? ""}`);
    });
  }

  const o = quoted?.options;
  const money = (m: bigint) => (o === undefined ? "" : formatMoney(lang, m, o.amountScale, o.currency));
  const typeName = (id: string) => o?.roomTypes.find((x) => x.id === id)?.code ?? "";
  const plan = (id: string) => o?.ratePlans.find((x) => x.id === id);
  const num = (v: string) => (v === "" ? 0 : Number(v));
  return (
    <section>
      <PageTitle>{t("newReservationTitle")}</PageTitle>
      <form class="filters action" onSubmit={onQuote} aria-labelledby="stay-h">
        <h2 id="stay-h">{t("newStayTitle")}</h2>
        <label for="new-arrival">{t("colArrival")}</label>
        <input
          id="new-arrival"
          type="date"
          required
          value={stay.arrival}
          onInput={(e) => setStay({ ...stay, arrival: e.currentTarget.value })}
        />
        <label for="new-departure">{t("colDeparture")}</label>
        <input
          id="new-departure"
          type="date"
          required
          value={stay.departure}
          onInput={(e) => setStay({ ...stay, departure: e.currentTarget.value })}
        />
        <label for="new-adults">{t("adults")}</label>
        <input
          id="new-adults"
          type="number"
          min={1}
          max={20}
          value={stay.adults}
          onInput={(e) => setStay({ ...stay, adults: num(e.currentTarget.value) })}
        />
        <label for="new-children">{t("children")}</label>
        <input
          id="new-children"
          type="number"
          min={0}
          max={20}
          value={stay.children}
          onInput={(e) => setStay({ ...stay, children: num(e.currentTarget.value) })}
        />
        <button type="submit" id="show-prices" disabled={busy}>
          {t("showPrices")}
        </button>
      </form>
      {quoted !== undefined && o !== undefined && (
        <form class="stack" onSubmit={onBook} aria-labelledby="quotes-h" noValidate>
          <h2 id="quotes-h">
            {t("quotesTitle", {
              from: formatDay(lang, quoted.stay.arrival),
              to: formatDay(lang, quoted.stay.departure),
              n: nightsBetween(quoted.stay.arrival, quoted.stay.departure),
            })}
          </h2>
          {o.quotes.length === 0 ? (
            <p id="no-quotes">{t("noQuotes")}</p>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="quotes-h">
              <table id="quotes">
                <thead>
                  <tr>
                    <th scope="col">{t("colChoose")}</th>
                    <th scope="col">{t("colTotal")}</th>
                    <th scope="col">{t("colAvailability")}</th>
                    <th scope="col">{t("colRestrictions")}</th>
                    <th scope="col">{t("colPolicy")}</th>
                    <th scope="col">{t("colDeposit")}</th>
                  </tr>
                </thead>
                <tbody>
                  {o.quotes.map((q) => {
                    const key = `${q.roomTypeId}/${q.ratePlanId}`;
                    const p = plan(q.ratePlanId);
                    const restr = restrictionsOf(t, lang, quoted.ari.get(key) ?? [], quoted.stay);
                    const policy = p?.cancellationPolicy;
                    const id = `quote-${typeName(q.roomTypeId)}-${p?.code ?? ""}`;
                    return (
                      <tr key={key} id={`${id}-row`}>
                        <td>
                          <label class="inline">
                            <input
                              type="radio"
                              name="quote"
                              id={id}
                              value={key}
                              checked={choice === key}
                              onChange={() => setChoice(key)}
                            />{" "}
                            {typeName(q.roomTypeId)} · {p?.code ?? ""} (
                            {lookup(lang, `board_${p?.boardType ?? ""}`) ?? p?.boardType})
                          </label>
                        </td>
                        <td class="num">{money(q.totalMinor)}</td>
                        <td>{q.available ? t("quoteAvailable") : t("quoteSoldOut")}</td>
                        <td class={restr.length > 0 ? "warning" : ""}>
                          {restr.length === 0 ? t("restrNone") : restr.join("; ")}
                        </td>
                        <td>
                          {policy === undefined
                            ? t("policyFree")
                            : t("policyFee", { h: policy.freeUntilHours, fee: feeText(t, policy, money) })}
                        </td>
                        <td>
                          {q.deposit === undefined
                            ? t("none")
                            : t("depositDue", {
                                amount: money(q.deposit.amountMinor),
                                date: formatDay(lang, q.deposit.dueDate),
                              })}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          <label for="new-holder">{t("factHolder")}</label>
          <input id="new-holder" value={holder} autoComplete="off" onInput={(e) => setHolder(e.currentTarget.value)} />
          <label for="new-status">{t("factStatus")}</label>
          <select id="new-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="GUARANTEED">{t("rs_GUARANTEED")}</option>
            <option value="TENTATIVE">{t("rs_TENTATIVE")}</option>
          </select>
          <label for="new-notes">{t("factNotes")}</label>
          <textarea id="new-notes" value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
          {can(signed, "reservations.override_price") && (
            <>
              <label class="inline">
                <input
                  type="checkbox"
                  id="new-override"
                  checked={override}
                  onChange={(e) => setOverride(e.currentTarget.checked)}
                />{" "}
                {t("overridePrice")}
              </label>
              {override && (
                <>
                  <label for="new-price">{t("overrideAmount")}</label>
                  <input
                    id="new-price"
                    inputMode="decimal"
                    value={price}
                    aria-invalid={fieldError !== ""}
                    aria-describedby={fieldError !== "" ? "new-price-error" : undefined}
                    onInput={(e) => setPrice(e.currentTarget.value)}
                  />
                  {fieldError !== "" && (
                    <p id="new-price-error" class="field-error">
                      {fieldError}
                    </p>
                  )}
                </>
              )}
            </>
          )}
          {can(signed, "reservations.overbook") && (
            <label class="inline">
              <input
                type="checkbox"
                id="new-overbook"
                checked={overbook}
                onChange={(e) => setOverbook(e.currentTarget.checked)}
              />{" "}
              {t("overbookLabel")}
            </label>
          )}
          <button type="submit" class="primary" id="book" disabled={busy || choice === ""}>
            {t("bookButton")}
          </button>
        </form>
      )}
      <div id="create-error">
        <ErrorBox problem={problem} />
      </div>
      <p>
        <a href="/panel/reservations">{t("backToReservations")}</a>
      </p>
    </section>
  );
}
