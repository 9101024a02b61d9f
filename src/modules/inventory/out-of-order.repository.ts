import type { Queryable } from "../../db/queryable.ts";

/** Out-of-order periods of rooms (room_out_of_order); every statement is scoped by the property id. */

export interface OutOfOrderRange {
  id: string;
  fromDate: string;
  toDate: string;
}

/** Out-of-order ranges of a room with a day in [from, to), by first day. */
export function outOfOrderBetween(
  q: Queryable,
  propertyId: string,
  roomId: string,
  from: string,
  to: string,
): Promise<OutOfOrderRange[]> {
  return q.query<OutOfOrderRange>(
    `select id, to_char(from_date, 'YYYY-MM-DD') as "fromDate", to_char(to_date, 'YYYY-MM-DD') as "toDate"
       from room_out_of_order where property_id = $1 and room_id = $2 and to_date > $3 and from_date < $4 order by from_date`,
    [propertyId, roomId, from, to],
  );
}

/** An out-of-order period as the API shows it. */
export interface OutOfOrderPeriod {
  id: string;
  roomId: string;
  roomNumber: string;
  roomTypeId: string;
  from: string;
  /** Exclusive: the first day back in service. */
  to: string;
  reason: string;
  createdAt: Date;
  updatedAt: Date;
}

const periodCols = `o.id, o.room_id as "roomId", m.number as "roomNumber", m.room_type_id as "roomTypeId",
  to_char(o.from_date, 'YYYY-MM-DD') as "from", to_char(o.to_date, 'YYYY-MM-DD') as "to", o.reason,
  o.created_at as "createdAt", o.updated_at as "updatedAt"`;

/** One period of the property, locked for a change when `lock`. */
export async function findOutOfOrderPeriod(
  q: Queryable,
  propertyId: string,
  id: string,
  lock = false,
): Promise<OutOfOrderPeriod | undefined> {
  const [row] = await q.query<OutOfOrderPeriod>(
    `select ${periodCols} from room_out_of_order o join rooms m on m.property_id = o.property_id and m.id = o.room_id
      where o.property_id = $1 and o.id = $2${lock ? " for update of o" : ""}`,
    [propertyId, id],
  );
  return row;
}

/** Periods of the property (of one room when `roomId`) with a day in [from, to) (`to` null: no end), by first day. */
export function listOutOfOrderPeriods(
  q: Queryable,
  propertyId: string,
  filter: { roomId: string | null; from: string; to: string | null; limit: number; after?: string[] | undefined },
): Promise<OutOfOrderPeriod[]> {
  // `after`: the (first day, room number, id) of the previous page's last period
  return q.query<OutOfOrderPeriod>(
    `select ${periodCols} from room_out_of_order o join rooms m on m.property_id = o.property_id and m.id = o.room_id
      where o.property_id = $1 and ($2::uuid is null or o.room_id = $2) and o.to_date > $3::date
        and ($4::date is null or o.from_date < $4::date)
        and ($6::date is null or (o.from_date, m.number, o.id) > ($6::date, $7::text, $8::uuid))
      order by o.from_date, m.number, o.id limit $5`,
    [propertyId, filter.roomId, filter.from, filter.to, filter.limit, ...(filter.after ?? [null, null, null])],
  );
}

export async function insertOutOfOrderPeriod(
  q: Queryable,
  propertyId: string,
  p: { id: string; roomId: string; from: string; to: string; reason: string },
  now: Date,
): Promise<void> {
  await q.query(
    `insert into room_out_of_order (id, property_id, room_id, from_date, to_date, reason, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [p.id, propertyId, p.roomId, p.from, p.to, p.reason, now],
  );
}

export async function updateOutOfOrderPeriod(
  q: Queryable,
  propertyId: string,
  id: string,
  p: { from: string; to: string; reason: string },
  now: Date,
): Promise<void> {
  await q.query(
    "update room_out_of_order set from_date = $3, to_date = $4, reason = $5, updated_at = $6 where property_id = $1 and id = $2",
    [propertyId, id, p.from, p.to, p.reason, now],
  );
}

export async function deleteOutOfOrderPeriod(q: Queryable, propertyId: string, id: string): Promise<void> {
  await q.query("delete from room_out_of_order where property_id = $1 and id = $2", [propertyId, id]);
}
