import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  BoardType as BoardTypeEnum,
  CancellationFeeKind,
  type CancellationPolicy,
  DepositDueAnchor,
  type DepositPolicy,
  RoomStatus as RoomStatusEnum,
} from "../../../gen/hotelops/inventory/v1/inventory_pb.js";
import { invalidField } from "../../errors.ts";
import type {
  BoardType,
  PolicyFeeKind,
  RatePlan,
  RatePlanDeposit,
  RatePlanPolicy,
  Room,
  RoomStatus,
} from "./inventory.repository.ts";
import type { OutOfOrderPeriod } from "./out-of-order.repository.ts";

/** The inventory's proto messages <-> service values (what inventory.rpc.ts sends and reads). */

export function roomStatusIn(value: RoomStatusEnum): RoomStatus {
  if (value === RoomStatusEnum.UNSPECIFIED || RoomStatusEnum[value] === undefined)
    throw invalidField("status", "required");
  return RoomStatusEnum[value] as RoomStatus;
}

export function boardTypeIn(value: BoardTypeEnum): BoardType {
  if (value === BoardTypeEnum.UNSPECIFIED || BoardTypeEnum[value] === undefined)
    throw invalidField("boardType", "required");
  return BoardTypeEnum[value] as BoardType;
}

export const roomOut = (r: Room) => ({
  id: r.id,
  number: r.number,
  roomTypeId: r.roomTypeId,
  status: RoomStatusEnum[r.status],
});
export const periodOut = (p: OutOfOrderPeriod) => ({
  id: p.id,
  roomId: p.roomId,
  roomNumber: p.roomNumber,
  roomTypeId: p.roomTypeId,
  from: p.from,
  to: p.to,
  reason: p.reason,
  createdAt: timestampFromDate(p.createdAt),
  updatedAt: timestampFromDate(p.updatedAt),
});
export const ratePlanOut = (p: RatePlan) => ({
  id: p.id,
  code: p.code,
  name: p.name,
  boardType: BoardTypeEnum[p.boardType],
  roomTypeIds: p.roomTypeIds,
  pricesByOccupancy: p.pricesByOccupancy,
  ...(p.policy === null
    ? {}
    : {
        cancellationPolicy: {
          freeUntilHours: p.policy.freeHours,
          feeKind: CancellationFeeKind[p.policy.feeKind],
          feeValue: p.policy.feeValue,
        },
      }),
  ...(p.deposit === null
    ? {}
    : {
        depositPolicy: {
          kind: CancellationFeeKind[p.deposit.kind],
          value: p.deposit.value,
          dueAnchor: DepositDueAnchor[p.deposit.dueAnchor],
          dueDays: p.deposit.dueDays,
        },
      }),
});

export function depositIn(d: DepositPolicy | undefined): RatePlanDeposit | null {
  if (d === undefined) return null;
  if (d.kind === CancellationFeeKind.UNSPECIFIED || CancellationFeeKind[d.kind] === undefined)
    throw invalidField("deposit.kind", "FIRST_NIGHT, PERCENT or FIXED", "validation_failed");
  if (d.dueAnchor === DepositDueAnchor.UNSPECIFIED || DepositDueAnchor[d.dueAnchor] === undefined)
    throw invalidField("deposit.dueAnchor", "AFTER_BOOKING or BEFORE_ARRIVAL", "validation_failed");
  return {
    kind: CancellationFeeKind[d.kind] as PolicyFeeKind,
    value: d.value,
    dueAnchor: DepositDueAnchor[d.dueAnchor] as RatePlanDeposit["dueAnchor"],
    dueDays: d.dueDays,
  };
}

export function policyIn(p: CancellationPolicy | undefined): RatePlanPolicy | null {
  if (p === undefined) return null;
  if (p.feeKind === CancellationFeeKind.UNSPECIFIED || CancellationFeeKind[p.feeKind] === undefined)
    throw invalidField("policy.feeKind", "FIRST_NIGHT, PERCENT or FIXED", "validation_failed");
  return {
    freeHours: p.freeUntilHours,
    feeKind: CancellationFeeKind[p.feeKind] as PolicyFeeKind,
    feeValue: p.feeValue,
  };
}
