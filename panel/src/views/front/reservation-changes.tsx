// Changing a reservation (ReservationService.UpdateReservation: holder, dates, notes, tentative or guaranteed) and
// cancelling it (CancelReservation) with the fee its room lines' policies owe shown before the confirmation.
import { useState } from "preact/hooks";
import { can, dateOf, formatMoney, ReservationStatus, type Reservation, type Signed } from "../../api.ts";
import { formatDate, useI18n } from "../../i18n.ts";
import { Confirm, ErrorBox, useAction } from "../common.tsx";

const open = (r: Reservation) => r.status === ReservationStatus.TENTATIVE || r.status === ReservationStatus.GUARANTEED;

/** What cancelling now costs: each line past its free-until instant owes its fee (the server posts the same). */
function cancellationFee(r: Reservation, now: Date): { fee: bigint; freeUntil: Date | undefined } {
  let fee = 0n;
  let freeUntil: Date | undefined;
  for (const line of r.rooms) {
    const p = line.cancellationPolicy;
    if (p === undefined) continue;
    const until = dateOf(p.freeUntil);
    if (until !== undefined && now.getTime() > until.getTime()) fee += p.feeMinor;
    else if (until !== undefined && (freeUntil === undefined || until < freeUntil)) freeUntil = until;
  }
  return { fee, freeUntil };
}

export function ReservationChanges(props: {
  signed: Signed;
  reservation: Reservation;
  onChanged: (t: string) => void;
}) {
  const { signed, reservation: r } = props;
  const editable = open(r) || r.status === ReservationStatus.IN_HOUSE;
  return (
    <>
      {editable && can(signed, "reservations.update") && <ChangeStay {...props} />}
      {open(r) && can(signed, "reservations.cancel") && <CancelStay {...props} />}
    </>
  );
}

function ChangeStay({
  signed,
  reservation: r,
  onChanged,
}: {
  signed: Signed;
  reservation: Reservation;
  onChanged: (t: string) => void;
}) {
  const { t } = useI18n();
  const [holder, setHolder] = useState(r.holderName);
  const [arrival, setArrival] = useState(r.arrivalDate);
  const [departure, setDeparture] = useState(r.departureDate);
  const [notes, setNotes] = useState(r.notes);
  const [status, setStatus] = useState(r.status);
  const { busy, problem, run } = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    await run(async () => {
      // only what changed: a check-in fixed the arrival, and the server says so if it is sent anyway
      await signed.reservations.updateReservation({
        reservationId: r.id,
        ...(holder !== r.holderName ? { holderName: holder } : {}),
        ...(arrival !== r.arrivalDate ? { arrivalDate: arrival } : {}),
        ...(departure !== r.departureDate ? { departureDate: departure } : {}),
        ...(notes !== r.notes ? { notes } : {}),
        ...(status !== r.status ? { status } : {}),
      });
      onChanged(t("reservationChanged", { code: r.code }));
    });
  }
  return (
    <details class="action" id="change-details">
      <summary id="change-open">{t("changeReservation")}</summary>
      <form class="stack" onSubmit={submit} aria-label={t("changeReservation")}>
        <label for="edit-holder">{t("factHolder")}</label>
        <input id="edit-holder" value={holder} onInput={(e) => setHolder(e.currentTarget.value)} />
        <label for="edit-arrival">{t("colArrival")}</label>
        <input id="edit-arrival" type="date" value={arrival} onInput={(e) => setArrival(e.currentTarget.value)} />
        <label for="edit-departure">{t("colDeparture")}</label>
        <input id="edit-departure" type="date" value={departure} onInput={(e) => setDeparture(e.currentTarget.value)} />
        <label for="edit-notes">{t("factNotes")}</label>
        <textarea id="edit-notes" value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
        {open(r) && (
          <>
            <label for="edit-status">{t("factStatus")}</label>
            <select
              id="edit-status"
              value={String(status)}
              onChange={(e) => setStatus(Number(e.currentTarget.value) as ReservationStatus)}
            >
              <option value={String(ReservationStatus.GUARANTEED)}>{t("rs_GUARANTEED")}</option>
              <option value={String(ReservationStatus.TENTATIVE)}>{t("rs_TENTATIVE")}</option>
            </select>
          </>
        )}
        <button type="submit" class="primary" id="save-change" disabled={busy}>
          {t("saveChange")}
        </button>
        <div id="change-error">
          <ErrorBox problem={problem} />
        </div>
      </form>
    </details>
  );
}

function CancelStay({
  signed,
  reservation: r,
  onChanged,
}: {
  signed: Signed;
  reservation: Reservation;
  onChanged: (t: string) => void;
}) {
  const { t, lang } = useI18n();
  const [confirming, setConfirming] = useState<{ fee: bigint; freeUntil: Date | undefined } | undefined>();
  const { problem, run: act } = useAction();
  const money = (m: bigint) => formatMoney(lang, m, r.amountScale, r.currency);
  async function run() {
    setConfirming(undefined);
    await act(async () => {
      await signed.reservations.cancelReservation({ reservationId: r.id });
      onChanged(t("reservationCancelled", { code: r.code }));
    });
  }
  const feeText = (c: { fee: bigint; freeUntil: Date | undefined }) =>
    c.fee > 0n
      ? t("cancelFee", { code: r.code, amount: money(c.fee) })
      : c.freeUntil !== undefined
        ? t("cancelFreeUntil", { code: r.code, until: formatDate(lang, c.freeUntil) })
        : t("cancelFree", { code: r.code });
  return (
    <div class="action">
      {confirming === undefined ? (
        <button
          type="button"
          class="danger"
          id="cancel-reservation"
          onClick={() => setConfirming(cancellationFee(r, new Date()))}
        >
          {t("cancelReservation")}
        </button>
      ) : (
        <Confirm text={feeText(confirming)} onYes={() => void run()} onNo={() => setConfirming(undefined)} />
      )}
      <div id="cancel-error">
        <ErrorBox problem={problem} />
      </div>
    </div>
  );
}
