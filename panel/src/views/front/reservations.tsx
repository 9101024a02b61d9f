// Reservations: a search by code or name over every face's bookings (ListReservations `query`). The table draws the
// first 100 rows and more on request: a browser's style and layout of a 500-row table cost more than the search itself.
import { useState } from "preact/hooks";
import { can, formatMoney, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { ErrorBox, PageTitle, useLoad } from "../common.tsx";
import { formatDay, sourceName, StatusPill } from "./shared.tsx";

const ROWS_AT_ONCE = 100;

export function Reservations({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const initial = new URLSearchParams(location.search).get("q") ?? "";
  const [text, setText] = useState(initial);
  const [query, setQuery] = useState(initial);
  const [shown, setShown] = useState(ROWS_AT_ONCE);
  // a new search aborts the one in flight (useLoad's signal)
  const found = useLoad(
    async (signal) => {
      const page = await signed.reservations.listReservations({ query, limit: 500 }, { signal });
      // newest stays first: what the front desk looks for is usually now or ahead
      // (ISO dates and ASCII codes: plain comparison, not the collator, which is slow over hundreds of rows)
      const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
      return [...page.reservations].sort((a, b) => cmp(b.arrivalDate, a.arrivalDate) || cmp(a.code, b.code));
    },
    [query],
  );
  function onSubmit(e: Event) {
    e.preventDefault();
    const q = text.trim();
    history.replaceState(null, "", q === "" ? "/panel/reservations" : `/panel/reservations?q=${encodeURIComponent(q)}`);
    setQuery(q);
    setShown(ROWS_AT_ONCE);
  }
  const total = found.data?.length ?? 0;
  return (
    <section>
      <PageTitle>{t("reservationsTitle")}</PageTitle>
      {can(signed, "reservations.create") && (
        <p>
          <a class="button" href="/panel/reservations/new" id="new-reservation">
            {t("newReservation")}
          </a>
        </p>
      )}
      <form role="search" class="search" onSubmit={onSubmit}>
        <label for="search">{t("searchLabel")}</label>
        <p id="search-help" class="small">
          {t("searchHelp")}
        </p>
        <div class="secret-row">
          <input
            id="search"
            type="search"
            value={text}
            autoComplete="off"
            aria-describedby="search-help"
            onInput={(e) => setText(e.currentTarget.value)}
          />
          <button type="submit" class="primary">
            {t("searchButton")}
          </button>
        </div>
      </form>
      <ErrorBox problem={found.problem} />
      <p id="search-count" role="status" class="small">
        {found.loading
          ? t("loading")
          : found.data === undefined
            ? ""
            : found.data.length === 0
              ? t("searchNone")
              : t("searchResults", { n: found.data.length })}
      </p>
      {found.data && found.data.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={t("reservationsTitle")}>
          <table id="reservations">
            <thead>
              <tr>
                <th scope="col">{t("colCode")}</th>
                <th scope="col">{t("colGuest")}</th>
                <th scope="col">{t("colArrival")}</th>
                <th scope="col">{t("colDeparture")}</th>
                <th scope="col">{t("colStatus")}</th>
                <th scope="col">{t("colSource")}</th>
                <th scope="col">{t("colTotal")}</th>
              </tr>
            </thead>
            <tbody>
              {found.data.slice(0, shown).map((r) => (
                <tr key={r.id}>
                  <td>
                    <a href={`/panel/reservations/${r.id}`}>{r.code}</a>
                  </td>
                  <td>{r.holderName}</td>
                  <td>{formatDay(lang, r.arrivalDate)}</td>
                  <td>{formatDay(lang, r.departureDate)}</td>
                  <td>
                    <StatusPill status={r.status} />
                  </td>
                  <td>{sourceName(lang, r.source, r.channel)}</td>
                  <td class="num">{formatMoney(lang, r.totalMinor, r.amountScale, r.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {total > shown && (
        <p>
          <button type="button" id="show-more" onClick={() => setShown(shown + ROWS_AT_ONCE)}>
            {t("showMore", { n: Math.min(ROWS_AT_ONCE, total - shown), shown, total })}
          </button>
        </p>
      )}
    </section>
  );
}
