// Today: the business date and the day's work, each list leading to the action (check-in, check-out, the rack).
import { can, nextDay, ReservationStatus, RoomStatus, type Reservation, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { useLiveEvents } from "../../live.ts";
import { ErrorBox, PageTitle, useLoad } from "../common.tsx";
import { formatDay, nightsBetween, propertyCode } from "./shared.tsx";

const todayEvents = [
  "reservation.created",
  "reservation.updated",
  "reservation.cancelled",
  "guest.checked_in",
  "guest.checked_out",
] as const;

export function Today({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const dash = useLoad(() => signed.mobile.getDashboard({}), []);
  const date = dash.data?.businessDate;
  const day = useLoad(async () => {
    if (date === undefined) return undefined;
    // guests not reported to the police (KBS): only for staff holding guests.report
    const unreported = can(signed, "guests.report")
      ? signed.guests.listUnreportedGuests({ propertyCode: propertyCode(signed) })
      : Promise.resolve(undefined);
    const [arrivals, inHouse, rooms, reporting, overdue] = await Promise.all([
      signed.reservations.listReservations({
        arrivalFrom: date,
        arrivalTo: nextDay(date),
        statuses: [ReservationStatus.TENTATIVE, ReservationStatus.GUARANTEED],
        limit: 500,
      }),
      signed.reservations.listReservations({ statuses: [ReservationStatus.IN_HOUSE], limit: 500 }),
      signed.inventory.listRooms({ propertyCode: propertyCode(signed), limit: 500 }),
      unreported,
      signed.reservations.listOverdueDeposits({ propertyCode: propertyCode(signed), limit: 100 }),
    ]);
    const byCode = (a: Reservation, b: Reservation) => a.code.localeCompare(b.code);
    return {
      arrivals: [...arrivals.reservations].sort(byCode),
      inHouse: [...inHouse.reservations].sort(byCode),
      departures: inHouse.reservations.filter((r) => r.departureDate <= date).sort(byCode),
      toClean: rooms.rooms.filter((r) => r.status === RoomStatus.DIRTY),
      reporting,
      // earliest due date first, as the server orders them
      overdue: overdue.reservations,
    };
  }, [date]);
  // live: a booking, a change, an arrival or departure, or a night audit moving the date reloads the lists
  useLiveEvents(signed, todayEvents, () => {
    dash.reload();
    day.reload();
  });
  const d = day.data;
  return (
    <section>
      <PageTitle>{t("todayTitle")}</PageTitle>
      <ErrorBox problem={dash.problem ?? day.problem} />
      {date !== undefined && (
        <p id="business-date" class="status-line">
          <strong>{t("businessDate", { date: formatDay(lang, date) })}</strong>
        </p>
      )}
      {(dash.loading || day.loading) && <p>{t("loading")}</p>}
      {d && (
        <div class="today">
          <DayList
            id="arrivals"
            title={t("arrivalsTitle", { n: d.arrivals.length })}
            none={t("arrivalsNone")}
            items={d.arrivals}
            action={(r) => t("actionCheckIn", { code: r.code })}
          />
          <DayList
            id="departures"
            title={t("departuresTitle", { n: d.departures.length })}
            none={t("departuresNone")}
            items={d.departures}
            action={(r) => t("actionCheckOut", { code: r.code })}
          />
          <DayList
            id="in-house"
            title={t("inHouseTitle", { n: d.inHouse.length })}
            none={t("inHouseNone")}
            items={d.inHouse}
          />
          <DayList
            id="overdue-deposits"
            title={t("overdueDepositsTitle", { n: d.overdue.length })}
            none={t("overdueDepositsNone")}
            items={d.overdue}
            action={(r) =>
              t("actionTakeDeposit", { code: r.code, date: formatDay(lang, r.deposit?.dueDate ?? r.arrivalDate) })
            }
          />
          <section aria-labelledby="to-clean-h" class="day-list">
            <h2 id="to-clean-h">{t("toCleanTitle", { n: d.toClean.length })}</h2>
            {d.toClean.length === 0 ? (
              <p>{t("toCleanNone")}</p>
            ) : (
              <>
                <ul id="to-clean" class="chips">
                  {d.toClean.map((r) => (
                    <li key={r.id}>{t("room", { n: r.number })}</li>
                  ))}
                </ul>
                <a href="/panel/rooms">{t("actionRooms")}</a>
              </>
            )}
          </section>
          {d.reporting && (
            <section aria-labelledby="unreported-h" class="day-list">
              <h2 id="unreported-h">{t("unreportedTitle", { n: d.reporting.unreported.length })}</h2>
              {d.reporting.unreported.length === 0 ? (
                <p>{t("unreportedNone")}</p>
              ) : (
                <ul id="unreported">
                  {d.reporting.unreported.map((u) => (
                    <li key={`${u.reservationRoomId}:${u.guestId}`}>
                      <a href={`/panel/reservations/${u.reservationId}`}>{u.reservationCode}</a>
                      {u.roomNumber !== "" && <> · {t("room", { n: u.roomNumber })}</>} ·{" "}
                      {u.guestName === "" ? t("unreportedNoGuests") : u.guestName} · {t(reasonKey(u.reason))}
                    </li>
                  ))}
                </ul>
              )}
              {d.reporting.failedReports > 0 && (
                <p id="failed-reports">{t("failedReportsLine", { n: d.reporting.failedReports })}</p>
              )}
            </section>
          )}
        </div>
      )}
    </section>
  );
}

function DayList(props: {
  id: string;
  title: string;
  none: string;
  items: Reservation[];
  action?: (r: Reservation) => string;
}) {
  const { t } = useI18n();
  return (
    <section aria-labelledby={`${props.id}-h`} class="day-list">
      <h2 id={`${props.id}-h`}>{props.title}</h2>
      {props.items.length === 0 ? (
        <p>{props.none}</p>
      ) : (
        <ul id={props.id}>
          {props.items.map((r) => (
            <li key={r.id}>
              <a href={`/panel/reservations/${r.id}`}>{props.action ? props.action(r) : r.code}</a> · {r.holderName} ·{" "}
              {t("nights", { n: nightsBetween(r.arrivalDate, r.departureDate) })}
              {r.rooms.some((l) => l.roomNumber) && (
                <>
                  {" "}
                  ·{" "}
                  {r.rooms
                    .map((l) => l.roomNumber)
                    .filter(Boolean)
                    .map((n) => t("room", { n: n! }))
                    .join(", ")}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The string of an unreported guest's reason (an unknown one reads as not reported). */
function reasonKey(reason: string) {
  switch (reason) {
    case "no_guests":
      return "unreported_no_guests" as const;
    case "incomplete":
      return "unreported_incomplete" as const;
    case "pending":
      return "unreported_pending" as const;
    case "failed":
      return "unreported_failed" as const;
    default:
      return "unreported_not_queued" as const;
  }
}
