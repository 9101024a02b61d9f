// A room move from the rack (ReservationService.MoveRoom): the desk picks an occupied room's Move, the rack then offers
// Move here on every clean or inspected room nobody is in, and a confirmation naming both rooms (and, for a room of
// another type, whether that type's prices are charged for the remaining nights) sends the move. The server checks
// the rest (a stay holding the room later, the rate plan covering the type) and its refusal is shown as it says it.
import { useState } from "preact/hooks";
import { RoomStatus, type Room, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { Confirm, ErrorBox, useAction } from "../common.tsx";

/** Who is in a room now: the in-house reservation and its checked-in line. */
export interface Occupant {
  id: string;
  code: string;
  lineId: string;
}

export interface Moving {
  occupant: Occupant;
  from: Room;
}

/** A room a guest may be moved to from the rack: another room, clean or inspected, nobody in it. */
export function canReceive(moving: Moving, room: Room, status: RoomStatus, occupied: boolean): boolean {
  return room.id !== moving.from.id && !occupied && (status === RoomStatus.CLEAN || status === RoomStatus.INSPECTED);
}

export function RackMove(props: {
  signed: Signed;
  moving: Moving;
  target: Room | undefined;
  onCancel: () => void;
  onMoved: (text: string) => void;
}) {
  const { t } = useI18n();
  const { moving, target } = props;
  const [reprice, setReprice] = useState(false);
  const { busy, problem, run } = useAction();
  const otherType = target !== undefined && target.roomTypeId !== moving.from.roomTypeId;
  async function move() {
    if (target === undefined) return;
    await run(async () => {
      await props.signed.reservations.moveRoom({
        reservationId: moving.occupant.id,
        reservationRoomId: moving.occupant.lineId,
        roomId: target.id,
        reprice: otherType && reprice,
      });
      props.onMoved(t("roomMoved", { code: moving.occupant.code, from: moving.from.number, to: target.number }));
    });
  }
  return (
    <div class="notice" id="rack-move" role="region" aria-label={t("rackMoveTitle")}>
      <p>{t("rackMoving", { code: moving.occupant.code, n: moving.from.number })}</p>
      {target !== undefined && otherType && (
        <label class="inline">
          <input
            type="checkbox"
            id="rack-move-reprice"
            checked={reprice}
            onChange={(e) => setReprice(e.currentTarget.checked)}
          />{" "}
          {t("moveReprice")}
        </label>
      )}
      {target !== undefined && !busy ? (
        <Confirm
          key={target.id}
          text={t("rackMoveConfirm", { code: moving.occupant.code, from: moving.from.number, to: target.number })}
          onYes={() => void move()}
          onNo={props.onCancel}
        />
      ) : (
        <button type="button" id="rack-move-cancel" onClick={props.onCancel}>
          {t("cancel")}
        </button>
      )}
      <div id="rack-move-error">
        <ErrorBox problem={problem} />
      </div>
    </div>
  );
}
