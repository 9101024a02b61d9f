// What the desk does to one room line besides check-in and check-out: move an in-house guest to another room
// (ReservationService.MoveRoom) and attach the room's guests (GuestService: a profile found by document number or
// name, or a new one, linked with AddRoomLineGuest; RemoveRoomLineGuest unlinks).
import { useState } from "preact/hooks";
import { can, RoomStatus, type Reservation, type Room, type RoomLine, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { ErrorBox, useAction } from "../common.tsx";
import { roomStatusName } from "./shared.tsx";
import { IdentityScan } from "./identity-scan.tsx";

interface LineProps {
  signed: Signed;
  reservation: Reservation;
  line: RoomLine;
  index: number;
  rooms: Room[];
  onChanged: (text: string) => void;
}

export function MoveRoom(props: LineProps) {
  const { t, lang } = useI18n();
  const { line } = props;
  const ready = props.rooms.filter(
    (room) => room.id !== line.roomId && (room.status === RoomStatus.CLEAN || room.status === RoomStatus.INSPECTED),
  );
  const [roomId, setRoomId] = useState("");
  const [reprice, setReprice] = useState(false);
  const { problem, run } = useAction();
  const chosen = roomId || ready[0]?.id || "";
  const otherType = ready.find((r) => r.id === chosen)?.roomTypeId !== line.roomTypeId;
  async function submit(e: Event) {
    e.preventDefault();
    await run(async () => {
      const out = await props.signed.reservations.moveRoom({
        reservationId: props.reservation.id,
        reservationRoomId: line.id,
        roomId: chosen,
        reprice: otherType && reprice,
      });
      const number = out.reservation?.rooms.find((l) => l.id === line.id)?.roomNumber ?? "";
      props.onChanged(t("roomMoved", { code: props.reservation.code, from: line.roomNumber ?? "", to: number }));
    });
  }
  const selectId = `move-room-${props.index}`;
  return (
    <form class="filters action" onSubmit={submit} aria-label={t("moveFor", { n: line.roomNumber ?? "" })}>
      <label for={selectId}>{t("moveTo")}</label>
      <select id={selectId} value={chosen} onChange={(e) => setRoomId(e.currentTarget.value)}>
        {ready.length === 0 && <option value="">{t("noRoomReady")}</option>}
        {ready.map((room) => (
          <option key={room.id} value={room.id}>
            {t("roomStatusLabel", { n: room.number, status: roomStatusName(lang, room.status) })}
          </option>
        ))}
      </select>
      {otherType && (
        <label class="inline">
          <input type="checkbox" checked={reprice} onChange={(e) => setReprice(e.currentTarget.checked)} />{" "}
          {t("moveReprice")}
        </label>
      )}
      <button type="submit" id={`move-${props.index}`} disabled={chosen === ""}>
        {t("moveRoom")}
      </button>
      <ErrorBox problem={problem} />
    </form>
  );
}

const documentTypes = ["PASSPORT", "TC_KIMLIK"] as const;

export function LineGuests(props: LineProps) {
  const { t } = useI18n();
  const { signed, line, reservation: r, index } = props;
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<RoomLine["guests"] | undefined>();
  const [form, setForm] = useState({
    givenName: "",
    familyName: "",
    nationality: "",
    documentType: "PASSPORT",
    documentNumber: "",
  });
  const { problem, run } = useAction();
  const edit = can(signed, "frontdesk.check_in");
  const names = line.guests.map((g) => `${g.givenName} ${g.familyName}`);

  async function link(guestId: string, name: string) {
    await run(async () => {
      await signed.guests.addRoomLineGuest({ reservationId: r.id, reservationRoomId: line.id, guestId });
      setFound(undefined);
      props.onChanged(t("guestLinked", { name, room: line.roomNumber ?? r.code }));
    });
  }
  async function unlink(guestId: string, name: string) {
    await run(async () => {
      await signed.guests.removeRoomLineGuest({ reservationId: r.id, reservationRoomId: line.id, guestId });
      props.onChanged(t("guestUnlinked", { name }));
    });
  }
  async function search(e: Event) {
    e.preventDefault();
    const q = query.trim();
    // a document number has a digit; a name has none
    const byDocument = /\d/.test(q);
    await run(async () => {
      const out = await signed.guests.searchGuests(byDocument ? { documentNumber: q } : { name: q });
      setFound(out.guests);
    });
  }
  async function create(e: Event) {
    e.preventDefault();
    await run(async () => {
      const out = await signed.guests.createGuest({
        ...form,
        ...(form.documentNumber === "" ? { documentType: "" } : {}),
      });
      await link(out.guest?.id ?? "", `${form.givenName} ${form.familyName}`);
      setForm({ ...form, givenName: "", familyName: "", documentNumber: "" });
    });
  }
  const id = (s: string) => `${s}-${index}`;
  return (
    <div class="action" id={id("guests")}>
      <h4>{t("lineGuestsTitle")}</h4>
      {names.length === 0 ? (
        <p class="small">{t("lineGuestsNone")}</p>
      ) : (
        <ul class="notes">
          {line.guests.map((g, i) => (
            <li key={g.id}>
              {names[i]}
              {g.documentNumber !== "" && <> · {g.documentNumber}</>}{" "}
              {edit && (
                <button type="button" class="small-button" onClick={() => void unlink(g.id, names[i]!)}>
                  {t("guestRemove", { name: names[i]! })}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {edit && (
        <>
          <form class="filters" role="search" onSubmit={search} aria-label={t("guestSearch")}>
            <label for={id("guest-search")}>{t("guestSearch")}</label>
            <input id={id("guest-search")} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
            <button type="submit" id={id("guest-find")}>
              {t("searchButton")}
            </button>
          </form>
          {found !== undefined && (
            <ul class="notes" id={id("guest-found")} aria-label={t("guestFound")}>
              {found.length === 0 && <li>{t("guestNoneFound")}</li>}
              {found.map((g) => {
                const name = `${g.givenName} ${g.familyName}`;
                return (
                  <li key={g.id}>
                    {name}
                    {g.documentNumber !== "" && <> · {g.documentNumber}</>}{" "}
                    <button type="button" class="small-button" onClick={() => void link(g.id, name)}>
                      {t("guestAdd", { name })}
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
          <details>
            <summary>{t("guestNew")}</summary>
            <form class="stack" onSubmit={create} aria-label={t("guestNew")}>
              <label for={id("g-given")}>{t("givenName")}</label>
              <input
                id={id("g-given")}
                value={form.givenName}
                onInput={(e) => setForm({ ...form, givenName: e.currentTarget.value })}
              />
              <label for={id("g-family")}>{t("familyName")}</label>
              <input
                id={id("g-family")}
                value={form.familyName}
                onInput={(e) => setForm({ ...form, familyName: e.currentTarget.value })}
              />
              <label for={id("g-nat")}>{t("nationality")}</label>
              <input
                id={id("g-nat")}
                value={form.nationality}
                maxLength={2}
                onInput={(e) => setForm({ ...form, nationality: e.currentTarget.value.toUpperCase() })}
              />
              <label for={id("g-doctype")}>{t("documentType")}</label>
              <select
                id={id("g-doctype")}
                value={form.documentType}
                onChange={(e) => setForm({ ...form, documentType: e.currentTarget.value })}
              >
                {documentTypes.map((d) => (
                  <option key={d} value={d}>
                    {t(`doc_${d}`)}
                  </option>
                ))}
              </select>
              <label for={id("g-docnum")}>{t("documentNumber")}</label>
              <input
                id={id("g-docnum")}
                value={form.documentNumber}
                onInput={(e) => setForm({ ...form, documentNumber: e.currentTarget.value })}
              />
              <button type="submit" id={id("guest-create")}>
                {t("guestCreate")}
              </button>
            </form>
          </details>
          <IdentityScan signed={signed} line={line} index={index} onSaved={props.onChanged} />
        </>
      )}
      <div id={id("guest-error")}>
        <ErrorBox problem={problem} />
      </div>
    </div>
  );
}
