// The room rack: every room by floor or by type with its housekeeping status, changed in one click by staff
// holding rooms.manage (InventoryService.SetRoomStatus); an in-house guest moved to another room from it
// (rack-move.tsx, reservations.update).
import { useState } from "preact/hooks";
import { can, problemOf, ReservationStatus, RoomStatus, type Problem, type Room, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { ErrorBox, PageTitle, useLoad } from "../common.tsx";
import { propertyCode, roomStatusName } from "./shared.tsx";
import { canReceive, RackMove, type Moving, type Occupant } from "./rack-move.tsx";

const settable = [RoomStatus.CLEAN, RoomStatus.DIRTY, RoomStatus.INSPECTED] as const;

/** The floor of a room number as hotels number them (101 → 1, 1204 → 12); a short number is the ground floor. */
const floorOf = (n: string): string => (/^\d{3,}$/.test(n) ? String(Number(n.slice(0, -2))) : "0");

export function Rooms({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const code = propertyCode(signed);
  const data = useLoad(async () => {
    const [types, rooms, inHouse] = await Promise.all([
      signed.inventory.listRoomTypes({ propertyCode: code, limit: 500 }),
      signed.inventory.listRooms({ propertyCode: code, limit: 500 }),
      signed.reservations.listReservations({ statuses: [ReservationStatus.IN_HOUSE], limit: 500 }),
    ]);
    // who is in each room now (a checked-in line not yet out)
    const guests = new Map<string, Occupant>();
    for (const r of inHouse.reservations)
      for (const l of r.rooms)
        if (l.roomId !== undefined && l.checkedInAt !== undefined && l.checkedOutAt === undefined)
          guests.set(l.roomId, { id: r.id, code: r.code, lineId: l.id });
    return { types: types.roomTypes, rooms: rooms.rooms, guests };
  }, []);
  const [by, setBy] = useState<"floor" | "type">("floor");
  const [changed, setChanged] = useState("");
  const [problem, setProblem] = useState<Problem | undefined>();
  const [local, setLocal] = useState<Record<string, RoomStatus>>({});
  const [moving, setMoving] = useState<Moving | undefined>();
  const [target, setTarget] = useState<Room | undefined>();
  const manage = can(signed, "rooms.manage");
  const mover = can(signed, "reservations.update");
  const typeCode = (id: string) => data.data?.types.find((x) => x.id === id)?.code ?? "";

  async function setStatus(room: Room, status: RoomStatus) {
    setProblem(undefined);
    try {
      const out = await signed.inventory.setRoomStatus({ propertyCode: code, roomId: room.id, status });
      const now = out.room?.status ?? status;
      setLocal((l) => ({ ...l, [room.id]: now }));
      setChanged(t("roomStatusLabel", { n: room.number, status: roomStatusName(lang, now) }));
    } catch (err) {
      setProblem(problemOf(err));
    }
  }

  function endMove(text?: string) {
    setMoving(undefined);
    setTarget(undefined);
    if (text === undefined) return;
    setChanged(text);
    // the server's statuses now (the room left is dirty): a status set here before gives way to them
    setLocal({});
    data.reload();
  }

  const groups = new Map<string, Room[]>();
  for (const room of data.data?.rooms ?? []) {
    const key = by === "floor" ? t("floor", { n: floorOf(room.number) }) : typeCode(room.roomTypeId);
    groups.set(key, [...(groups.get(key) ?? []), room]);
  }
  return (
    <section>
      <PageTitle>{t("roomsRackTitle")}</PageTitle>
      <fieldset class="filters">
        <legend>{t("groupBy")}</legend>
        {(["floor", "type"] as const).map((g) => (
          <label key={g} class="inline">
            <input type="radio" name="group" value={g} checked={by === g} onChange={() => setBy(g)} />{" "}
            {g === "floor" ? t("byFloor") : t("byType")}
          </label>
        ))}
      </fieldset>
      <ErrorBox problem={data.problem ?? problem} />
      <p role="status" id="rack-status" class="small">
        {changed}
      </p>
      {moving !== undefined && (
        <RackMove
          signed={signed}
          moving={moving}
          target={target}
          onCancel={() => endMove()}
          onMoved={(text) => endMove(text)}
        />
      )}
      {data.loading && <p>{t("loading")}</p>}
      {data.data && data.data.rooms.length === 0 && <p>{t("roomsNone")}</p>}
      {[...groups.entries()].map(([name, rooms]) => (
        <section key={name} aria-label={name}>
          <h2>{name}</h2>
          <ul class="rack">
            {rooms.map((room) => {
              const status = local[room.id] ?? room.status;
              const occupant = data.data?.guests.get(room.id);
              return (
                <li key={room.id} class={`rack-room rm_${RoomStatus[status]}`} id={`room-${room.number}`}>
                  <strong>{room.number}</strong> <span class="small">{typeCode(room.roomTypeId)}</span>
                  <br />
                  <span class="room-status">{roomStatusName(lang, status)}</span>
                  {occupant !== undefined && (
                    <>
                      {" · "}
                      <a href={`/panel/reservations/${occupant.id}`}>{t("occupiedBy", { code: occupant.code })}</a>
                    </>
                  )}
                  {mover && (
                    <span class="rack-move">
                      {occupant !== undefined && moving === undefined && (
                        <button
                          type="button"
                          class="small-button"
                          aria-label={t("rackMoveLabel", { code: occupant.code, n: room.number })}
                          onClick={() => setMoving({ occupant, from: room })}
                        >
                          {t("moveRoom")}
                        </button>
                      )}
                      {moving !== undefined && canReceive(moving, room, status, occupant !== undefined) && (
                        <button
                          type="button"
                          class="small-button"
                          aria-label={t("rackMoveHereLabel", { code: moving.occupant.code, n: room.number })}
                          aria-pressed={target?.id === room.id}
                          onClick={() => setTarget(room)}
                        >
                          {t("rackMoveHere")}
                        </button>
                      )}
                    </span>
                  )}
                  {manage && status !== RoomStatus.OUT_OF_ORDER && (
                    <span class="rack-actions">
                      {settable
                        .filter((s) => s !== status)
                        .map((s) => (
                          <button
                            key={s}
                            type="button"
                            class="small-button"
                            aria-label={t("markRoom", { n: room.number, status: roomStatusName(lang, s) })}
                            onClick={() => void setStatus(room, s)}
                          >
                            {roomStatusName(lang, s)}
                          </button>
                        ))}
                    </span>
                  )}
                </li>
              );
            })}
          </ul>
        </section>
      ))}
    </section>
  );
}
