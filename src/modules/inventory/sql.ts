/**
 * SQL fragments over this module's tables for other modules' statements that must stay one round trip (the
 * reservation reads, the change feed, reports, the dashboard): row sources keyed by expressions of the caller's
 * statement, with `own_` aliases so they never shadow the caller's. Everything else goes through this module's
 * functions.
 */

/**
 * Row sources of the property's room types, rate plans and rooms for a caller's join (`join (${roomTypesSql(
 * "$1")}) rt on rt.id = ...`): plain selections, which PostgreSQL pulls up into the caller's join, so the plan is
 * the one a direct join would get (a scalar subquery per row was measured 2x slower on a 500-reservation page).
 */
export function roomTypesSql(propertyIdExpr: string): string {
  return `select own_rt.property_id, own_rt.id, own_rt.code from room_types own_rt where own_rt.property_id = ${propertyIdExpr}`;
}

export function ratePlansSql(propertyIdExpr: string): string {
  return `select own_rp.property_id, own_rp.id, own_rp.code, own_rp.policy_free_hours, own_rp.policy_fee_kind, own_rp.policy_fee_value from rate_plans own_rp where own_rp.property_id = ${propertyIdExpr}`;
}

export function roomsSql(propertyIdExpr: string): string {
  return `select own_rm.property_id, own_rm.id, own_rm.number from rooms own_rm where own_rm.property_id = ${propertyIdExpr}`;
}

/**
 * A row source (use it as `(...) rooms`) of the property's room counters on the day `dayExpr`: `total`,
 * `sold`, `blocked` and `ooo` summed over its room types (a day without a row counts the room type's rooms).
 */
export function roomCountsOnDaySql(propertyIdExpr: string, dayExpr: string): string {
  return `select coalesce(sum(coalesce(own_d.total, own_rt.room_count)), 0)::int as total, coalesce(sum(own_d.sold), 0)::int as sold,
         coalesce(sum(own_d.blocked), 0)::int as blocked, coalesce(sum(own_d.out_of_order), 0)::int as ooo
    from room_types own_rt
    left join room_type_days own_d on own_d.property_id = own_rt.property_id and own_d.room_type_id = own_rt.id and own_d.date = ${dayExpr}
   where own_rt.property_id = ${propertyIdExpr}`;
}

/** Per day of the relation `days` (column `date`): the sellable rooms (rooms minus out of order) as `sellable`. */
export function sellableRoomsByDaySql(days: string, propertyIdExpr: string, fromExpr: string, toExpr: string): string {
  // The range's day rows are read once (a range of the key index) and hashed to the (day, room type) pairs. Joined
  // pair by pair, the planner of a large history (4 million day rows) expected one row per lookup and read each room
  // type's whole range once per day: 21,000 index pages for a month instead of 400, 3x the small database's time.
  return `with own_x as materialized (
      select room_type_id, date, total, out_of_order from room_type_days
       where property_id = ${propertyIdExpr} and date >= ${fromExpr} and date < ${toExpr})
  select ${days}.date, sum(coalesce(own_x.total, own_rt.room_count) - coalesce(own_x.out_of_order, 0))::int as sellable
    from ${days} cross join room_types own_rt
    left join own_x on own_x.room_type_id = own_rt.id and own_x.date = ${days}.date
   where own_rt.property_id = ${propertyIdExpr}
   group by ${days}.date`;
}

/**
 * A scalar subquery for a reservation read: the nights the holder `holderIdExpr` is short (an overbooking) as a
 * JSON array of `{date, roomTypeId, roomTypeCode, rooms}` in date, then room type code order; `[]` when none.
 * One probe of the holder index per reservation (the table holds only open overbookings).
 */
export function overbookedNightsSql(propertyIdExpr: string, holderIdExpr: string): string {
  return `(select coalesce(json_agg(json_build_object('date', to_char(own_o.date, 'YYYY-MM-DD'), 'roomTypeId', own_o.room_type_id,
            'roomTypeCode', own_ort.code, 'rooms', own_o.rooms) order by own_o.date, own_ort.code), '[]')
      from room_type_overbookings own_o join room_types own_ort on own_ort.property_id = own_o.property_id and own_ort.id = own_o.room_type_id
     where own_o.property_id = ${propertyIdExpr} and own_o.holder_id = ${holderIdExpr})`;
}
