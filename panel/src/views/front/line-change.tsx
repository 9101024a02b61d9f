// Changing one room line before check-in (ReservationService.UpdateReservation `rooms`): room type, rate plan,
// adults and children. The change is priced first by the quote a new booking gets (MobileService
// .GetReservationOptions for the stay and the guests): the line's new total and the difference, whether a room of the
// type is free and the rate plan's cancellation rule are shown, and only a confirmation sends the change. The server
// prices it again from the same daily prices and says why it refuses.
import { useState } from "preact/hooks";
import { formatMoney, type Reservation, type RoomLine, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { Confirm, ErrorBox, useAction } from "../common.tsx";
import { feeText } from "./shared.tsx";

type Options = Awaited<ReturnType<Signed["mobile"]["getReservationOptions"]>>;

interface Choice {
  roomTypeId: string;
  ratePlanId: string;
  adults: number;
  children: number;
}

interface Priced {
  choice: Choice;
  options: Options;
}

export function ChangeLine(props: {
  signed: Signed;
  reservation: Reservation;
  line: RoomLine;
  index: number;
  onChanged: (text: string) => void;
}) {
  const { t, lang } = useI18n();
  const { signed, reservation: r, line, index } = props;
  const [choice, setChoice] = useState<Choice>({
    roomTypeId: line.roomTypeId,
    ratePlanId: line.ratePlanId,
    adults: line.adults,
    children: line.children,
  });
  // the property's room types and rate plans, read when the form is first opened
  const [catalog, setCatalog] = useState<Options | undefined>();
  const [priced, setPriced] = useState<Priced | undefined>();
  const [confirming, setConfirming] = useState(false);
  const { busy, problem, run } = useAction();
  const money = (m: bigint) => formatMoney(lang, m, r.amountScale, r.currency);
  const id = (s: string) => `${s}-${index}`;

  const quote = (c: Choice) =>
    signed.mobile.getReservationOptions({
      arrivalDate: r.arrivalDate,
      departureDate: r.departureDate,
      adults: c.adults,
      children: c.children,
    });
  function onToggle(e: Event) {
    if ((e.currentTarget as HTMLDetailsElement).open && catalog === undefined)
      void run(async () => setCatalog(await quote(choice)));
  }
  const plansFor = (roomTypeId: string) => catalog?.ratePlans.filter((p) => p.roomTypeIds.includes(roomTypeId)) ?? [];
  function edit(next: Partial<Choice>) {
    const c = { ...choice, ...next };
    // a rate plan that does not cover the chosen room type gives way to the first that does
    const plans = plansFor(c.roomTypeId);
    if (plans.length > 0 && !plans.some((p) => p.id === c.ratePlanId)) c.ratePlanId = plans[0]!.id;
    setChoice(c);
    setPriced(undefined);
    setConfirming(false);
  }
  const onPrice = (e: Event) => {
    e.preventDefault();
    const c = choice;
    void run(async () => setPriced({ choice: c, options: await quote(c) }));
  };
  const save = () =>
    run(async () => {
      setConfirming(false);
      const c = choice;
      await signed.reservations.updateReservation({
        reservationId: r.id,
        rooms: [
          {
            reservationRoomId: line.id,
            ...(c.roomTypeId !== line.roomTypeId ? { roomTypeId: c.roomTypeId } : {}),
            ...(c.ratePlanId !== line.ratePlanId ? { ratePlanId: c.ratePlanId } : {}),
            ...(c.adults !== line.adults ? { adults: c.adults } : {}),
            ...(c.children !== line.children ? { children: c.children } : {}),
          },
        ],
      });
      props.onChanged(t("lineChanged", { code: r.code, n: index + 1 }));
    });

  const num = (v: string) => (v === "" ? 0 : Number(v));
  const typeCode = (roomTypeId: string) => catalog?.roomTypes.find((x) => x.id === roomTypeId)?.code ?? "";
  const q = priced?.options.quotes.find(
    (x) => x.roomTypeId === priced.choice.roomTypeId && x.ratePlanId === priced.choice.ratePlanId,
  );
  const plan = priced?.options.ratePlans.find((p) => p.id === priced.choice.ratePlanId);
  const unchanged =
    choice.roomTypeId === line.roomTypeId &&
    choice.ratePlanId === line.ratePlanId &&
    choice.adults === line.adults &&
    choice.children === line.children;
  // the line keeps the room it holds when its type stays; another type needs a free room every night
  const sameType = priced?.choice.roomTypeId === line.roomTypeId;
  const maxGuests = priced?.options.roomTypes.find((x) => x.id === priced.choice.roomTypeId)?.maxOccupancy ?? 0;
  const tooMany = priced !== undefined && priced.choice.adults + priced.choice.children > maxGuests;
  const difference = q === undefined ? 0n : q.totalMinor - line.totalMinor;
  return (
    <details class="action" id={id("line-change-details")} onToggle={onToggle}>
      <summary id={id("line-change")}>{t("lineChange", { n: index + 1 })}</summary>
      {catalog !== undefined && (
        <form class="filters" onSubmit={onPrice} aria-label={t("lineChange", { n: index + 1 })}>
          <label for={id("line-type")}>{t("roomType")}</label>
          <select
            id={id("line-type")}
            value={choice.roomTypeId}
            onChange={(e) => edit({ roomTypeId: e.currentTarget.value })}
          >
            {catalog.roomTypes.map((x) => (
              <option key={x.id} value={x.id}>
                {x.code} · {x.name}
              </option>
            ))}
          </select>
          <label for={id("line-plan")}>{t("ratePlan")}</label>
          <select
            id={id("line-plan")}
            value={choice.ratePlanId}
            onChange={(e) => edit({ ratePlanId: e.currentTarget.value })}
          >
            {plansFor(choice.roomTypeId).map((p) => (
              <option key={p.id} value={p.id}>
                {p.code} · {p.name}
              </option>
            ))}
          </select>
          <label for={id("line-adults")}>{t("adults")}</label>
          <input
            id={id("line-adults")}
            type="number"
            min={1}
            max={20}
            value={choice.adults}
            onInput={(e) => edit({ adults: num(e.currentTarget.value) })}
          />
          <label for={id("line-children")}>{t("children")}</label>
          <input
            id={id("line-children")}
            type="number"
            min={0}
            max={20}
            value={choice.children}
            onInput={(e) => edit({ children: num(e.currentTarget.value) })}
          />
          <button type="submit" id={id("line-price")} disabled={busy || unchanged}>
            {t("linePrice")}
          </button>
        </form>
      )}
      {priced !== undefined && (
        <div id={id("line-preview")} role="status">
          {q === undefined ? (
            <p class="warning">{t("lineNoPrice")}</p>
          ) : (
            <dl class="facts">
              <dt>{t("lineNewTotal")}</dt>
              <dd id={id("line-new-total")}>
                {money(q.totalMinor)} (
                {difference === 0n
                  ? t("lineSamePrice")
                  : t("lineDifference", { amount: `${difference > 0n ? "+" : ""}${money(difference)}` })}
                )
              </dd>
              <dt>{t("colAvailability")}</dt>
              <dd id={id("line-availability")}>
                {tooMany
                  ? t("lineTooMany", { max: maxGuests })
                  : sameType
                    ? t("lineKeepsRoom")
                    : q.available
                      ? t("quoteAvailable")
                      : t("quoteSoldOut")}
              </dd>
              <dt>{t("colPolicy")}</dt>
              <dd id={id("line-policy")}>
                {plan?.cancellationPolicy === undefined
                  ? t("policyFree")
                  : t("policyFee", {
                      h: plan.cancellationPolicy.freeUntilHours,
                      fee: feeText(t, plan.cancellationPolicy, money),
                    })}
              </dd>
            </dl>
          )}
          {q !== undefined && !confirming && (
            <button
              type="button"
              class="primary"
              id={id("line-save")}
              disabled={busy}
              onClick={() => setConfirming(true)}
            >
              {t("lineSave")}
            </button>
          )}
        </div>
      )}
      {confirming && q !== undefined && (
        <Confirm
          text={t("lineConfirm", {
            n: index + 1,
            type: typeCode(choice.roomTypeId),
            plan: plan?.code ?? "",
            a: choice.adults,
            c: choice.children,
            amount: money(q.totalMinor),
          })}
          onYes={() => void save()}
          onNo={() => setConfirming(false)}
        />
      )}
      <div id={id("line-error")}>
        <ErrorBox problem={problem} />
      </div>
    </details>
  );
}
