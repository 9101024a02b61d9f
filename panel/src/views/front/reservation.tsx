// One reservation: the stay, its rooms with the price of each night, the status, the folio balance; check-in
// (assign a room) and check-out (the balance shown first) of each room line.
import { useState } from "preact/hooks";
import {
  can,
  dateOf,
  formatMoney,
  ReservationStatus,
  RoomStatus,
  type Reservation,
  type Room,
  type RoomLine,
  type Signed,
} from "../../api.ts";
import { formatDate, useI18n } from "../../i18n.ts";
import { useLiveEvents } from "../../live.ts";
import { Confirm, ErrorBox, PageTitle, useAction, useLoad } from "../common.tsx";
import {
  formatDay,
  nightDates,
  nightsBetween,
  propertyCode,
  roomStatusName,
  sourceName,
  StatusPill,
} from "./shared.tsx";
import { LineGuests, MoveRoom } from "./line-actions.tsx";
import { ChangeLine } from "./line-change.tsx";
import { ReservationChanges } from "./reservation-changes.tsx";

const reservationEvents = [
  "reservation.updated",
  "reservation.cancelled",
  "guest.checked_in",
  "guest.checked_out",
  "folio.payment_posted",
] as const;

export function ReservationPage({ signed, id }: { signed: Signed; id: string }) {
  const { t, lang } = useI18n();
  const res = useLoad(() => signed.mobile.getMobileReservation({ reservationId: id }), [id]);
  // live: this reservation's changes, check-ins, check-outs and payments (a reconnect reloads too)
  useLiveEvents(signed, reservationEvents, (events) => {
    if (events.length === 0 || events.some((e) => (e.data?.id ?? e.data?.reservationId) === id)) res.reload();
  });
  // the rooms a guest may be checked in to: of the line's type, clean or inspected, nobody in them now
  const rooms = useLoad(async () => {
    const [all, inHouse] = await Promise.all([
      signed.inventory.listRooms({ propertyCode: propertyCode(signed), limit: 500 }),
      signed.reservations.listReservations({ statuses: [ReservationStatus.IN_HOUSE], limit: 500 }),
    ]);
    const occupied = new Set(
      inHouse.reservations.flatMap((x) =>
        x.rooms.filter((l) => l.checkedInAt !== undefined && l.checkedOutAt === undefined).map((l) => l.roomId),
      ),
    );
    return all.rooms.filter((room) => !occupied.has(room.id));
  }, [id]);
  const [done, setDone] = useState("");
  if (res.problem?.notFound)
    return (
      <section>
        <PageTitle>{t("reservationNotFound")}</PageTitle>
        <ErrorBox problem={res.problem} />
        <a href="/panel/reservations">{t("backToReservations")}</a>
      </section>
    );
  const r = res.data?.reservation;
  if (r === undefined)
    return (
      <section>
        <ErrorBox problem={res.problem} />
        {res.loading && <p>{t("loading")}</p>}
      </section>
    );
  const money = (m: bigint) => formatMoney(lang, m, r.amountScale, r.currency);
  const balance = res.data?.folioBalanceMinor;
  const changed = (text: string) => {
    setDone(text);
    res.reload();
    rooms.reload();
  };
  return (
    <section>
      <PageTitle>{t("reservationTitle", { code: r.code })}</PageTitle>
      <p role="status" id="done" class="result">
        {done}
      </p>
      <h2>{t("stayTitle")}</h2>
      <dl class="facts">
        <dt>{t("factHolder")}</dt>
        <dd id="holder">{r.holderName}</dd>
        <dt>{t("factStatus")}</dt>
        <dd id="status">
          <StatusPill status={r.status} />
        </dd>
        <dt>{t("factSource")}</dt>
        <dd>
          {sourceName(lang, r.source, r.channel)}
          {r.externalReference && <> · {r.externalReference}</>}
        </dd>
        <dt>{t("factStay")}</dt>
        <dd id="stay">
          {formatDay(lang, r.arrivalDate)} – {formatDay(lang, r.departureDate)} (
          {t("nights", { n: nightsBetween(r.arrivalDate, r.departureDate) })})
        </dd>
        <dt>{t("factGuests")}</dt>
        <dd>{t("guestsCount", { a: r.adults, c: r.children })}</dd>
        <dt>{t("factTotal")}</dt>
        <dd id="total">{money(r.totalMinor)}</dd>
        {balance !== undefined && (
          <>
            <dt>{t("factBalance")}</dt>
            <dd id="balance">{money(balance)}</dd>
          </>
        )}
        {r.notes !== "" && (
          <>
            <dt>{t("factNotes")}</dt>
            <dd>{r.notes}</dd>
          </>
        )}
        {r.restrictionOverrides.length > 0 && (
          <>
            <dt>{t("factOverrides")}</dt>
            <dd>{r.restrictionOverrides.join(", ")}</dd>
          </>
        )}
      </dl>
      {can(signed, "folio.view") && (
        <p>
          <a href={`/panel/reservations/${r.id}/folio`}>{t("openFolio")}</a>
        </p>
      )}
      <ReservationChanges key={`${r.id}-${r.changeSeq}`} signed={signed} reservation={r} onChanged={changed} />
      <h2>{t("roomsTitle")}</h2>
      {r.rooms.map((line, i) => (
        <LineCard
          key={line.id}
          signed={signed}
          reservation={r}
          line={line}
          index={i}
          rooms={rooms.data ?? []}
          balance={balance}
          onChanged={changed}
        />
      ))}
      <p>
        <a href="/panel/reservations">{t("backToReservations")}</a>
      </p>
    </section>
  );
}

function LineCard(props: {
  signed: Signed;
  reservation: Reservation;
  line: RoomLine;
  index: number;
  rooms: Room[];
  balance: bigint | undefined;
  onChanged: (text: string) => void;
}) {
  const { t, lang } = useI18n();
  const { reservation: r, line, signed } = props;
  const money = (m: bigint) => formatMoney(lang, m, r.amountScale, r.currency);
  const dates = nightDates(r.arrivalDate, line.nightlyMinor.length);
  const headingId = `line-${props.index}`;
  const canCheckIn =
    line.checkedInAt === undefined &&
    (r.status === ReservationStatus.TENTATIVE ||
      r.status === ReservationStatus.GUARANTEED ||
      r.status === ReservationStatus.IN_HOUSE) &&
    can(signed, "frontdesk.check_in");
  const canCheckOut =
    line.checkedInAt !== undefined && line.checkedOutAt === undefined && can(signed, "frontdesk.check_out");
  // room type, rate plan and guests of a line change before its check-in, while the stay is open
  const canChange =
    line.checkedInAt === undefined &&
    (r.status === ReservationStatus.TENTATIVE || r.status === ReservationStatus.GUARANTEED) &&
    can(signed, "reservations.update");
  const canMove =
    line.checkedInAt !== undefined && line.checkedOutAt === undefined && can(signed, "reservations.update");
  return (
    <section class="line" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {t("roomLine", { type: line.roomTypeCode, plan: line.ratePlanCode })} ·{" "}
        {line.roomNumber ? t("roomAssigned", { n: line.roomNumber }) : t("roomNotAssigned")}
      </h3>
      <p class="small">
        {t("guestsCount", { a: line.adults, c: line.children })}
        {line.guestNames.length > 0 && <> · {line.guestNames.join(", ")}</>}
        {line.checkedInAt && <> · {t("checkedInAt", { at: formatDate(lang, dateOf(line.checkedInAt)) })}</>}
        {line.checkedOutAt && <> · {t("checkedOutAt", { at: formatDate(lang, dateOf(line.checkedOutAt)) })}</>}
      </p>
      <div class="table-wrap" tabIndex={0} role="region" aria-labelledby={headingId}>
        <table class="nights">
          <thead>
            <tr>
              <th scope="col">{t("colNight")}</th>
              <th scope="col">{t("colPrice")}</th>
            </tr>
          </thead>
          <tbody>
            {line.nightlyMinor.map((m, i) => (
              <tr key={dates[i]}>
                <td>{formatDay(lang, dates[i]!)}</td>
                <td class="num">{money(m)}</td>
              </tr>
            ))}
            <tr>
              <th scope="row">{t("lineTotal")}</th>
              <td class="num">{money(line.totalMinor)}</td>
            </tr>
          </tbody>
        </table>
      </div>
      {canChange && <ChangeLine key={`${line.id}-${r.changeSeq}`} {...props} />}
      {canCheckIn && <CheckIn {...props} />}
      {canMove && <MoveRoom {...props} />}
      {canCheckOut && <CheckOut {...props} />}
      {r.status !== ReservationStatus.CANCELLED && line.checkedOutAt === undefined && <LineGuests {...props} />}
    </section>
  );
}

function CheckIn(props: {
  signed: Signed;
  reservation: Reservation;
  line: RoomLine;
  index: number;
  rooms: Room[];
  onChanged: (text: string) => void;
}) {
  const { t, lang } = useI18n();
  const { line } = props;
  const ready = props.rooms.filter(
    (room) =>
      room.roomTypeId === line.roomTypeId &&
      (room.id === line.roomId || room.status === RoomStatus.CLEAN || room.status === RoomStatus.INSPECTED),
  );
  const [roomId, setRoomId] = useState(line.roomId ?? "");
  const { busy, problem, run } = useAction();
  const selectId = `checkin-room-${props.index}`;
  async function submit(e: Event) {
    e.preventDefault();
    await run(async () => {
      const chosen = roomId || ready[0]?.id || "";
      const out = await props.signed.reservations.checkInRoomLine({
        reservationId: props.reservation.id,
        reservationRoomId: line.id,
        ...(chosen !== "" ? { roomId: chosen } : {}),
      });
      const number = out.reservation?.rooms.find((l) => l.id === line.id)?.roomNumber ?? "";
      props.onChanged(t("checkedIn", { code: props.reservation.code, room: number }));
    });
  }
  return (
    <form class="filters action" onSubmit={submit} aria-label={t("checkInFor", { n: props.index + 1 })}>
      <label for={selectId}>{t("assignRoom")}</label>
      <select id={selectId} value={roomId || ready[0]?.id || ""} onChange={(e) => setRoomId(e.currentTarget.value)}>
        {ready.length === 0 && <option value="">{t("noRoomReady")}</option>}
        {ready.map((room) => (
          <option key={room.id} value={room.id}>
            {t("roomStatusLabel", { n: room.number, status: roomStatusName(lang, room.status) })}
          </option>
        ))}
      </select>
      <button type="submit" class="primary" id={`checkin-${props.index}`} disabled={busy}>
        {t("checkIn")}
      </button>
      <ErrorBox problem={problem} />
    </form>
  );
}

function CheckOut(props: {
  signed: Signed;
  reservation: Reservation;
  line: RoomLine;
  index: number;
  balance: bigint | undefined;
  onChanged: (text: string) => void;
}) {
  const { t, lang } = useI18n();
  const r = props.reservation;
  const [confirming, setConfirming] = useState(false);
  const { problem, run: act } = useAction();
  const balance = props.balance ?? 0n;
  const balanceText = formatMoney(lang, balance, r.amountScale, r.currency);
  async function run() {
    setConfirming(false);
    await act(async () => {
      await props.signed.reservations.checkOutRoomLine({ reservationId: r.id, reservationRoomId: props.line.id });
      props.onChanged(t("checkedOut", { code: r.code, room: props.line.roomNumber ?? "" }));
    });
  }
  return (
    <div class="action">
      <p id={`checkout-balance-${props.index}`} class={balance === 0n ? "" : "warning"}>
        {balance === 0n ? t("balanceSettled") : t("balanceOpen", { amount: balanceText })}{" "}
        {can(props.signed, "folio.view") && <a href={`/panel/reservations/${r.id}/folio`}>{t("openFolio")}</a>}
      </p>
      {confirming ? (
        <Confirm
          text={t("checkOutConfirm", { room: props.line.roomNumber ?? "", amount: balanceText })}
          onYes={() => void run()}
          onNo={() => setConfirming(false)}
        />
      ) : (
        <button
          type="button"
          id={`checkout-${props.index}`}
          aria-describedby={`checkout-balance-${props.index}`}
          onClick={() => setConfirming(true)}
        >
          {t("checkOut")}
        </button>
      )}
      <ErrorBox problem={problem} />
    </div>
  );
}
