/**
 * The report catalogue: what each report is and the one SQL statement that answers it. Every statement takes
 * `$1` property id, `$2` first day and `$3` last day (both included), selects the columns under their keys in
 * catalogue order plus `total` (`count(*) over ()`, the row count before the limit), and stops after `$4` rows.
 * Dates are rendered `YYYY-MM-DD` in SQL; money is integer minor units rendered as text (bigint).
 */
export type ColumnType = "date" | "text" | "integer" | "money" | "basis_points";

export interface ReportColumn {
  key: string;
  label: string;
  type: ColumnType;
}

export interface ReportDefinition {
  id: string;
  name: string;
  description: string;
  columns: readonly ReportColumn[];
  /** One statement, or `occupancy` for the by-day figures computed with the forecast's query. */
  sql: string | "occupancy";
}

const col = (key: string, label: string, type: ColumnType): ReportColumn => ({ key, label, type });
const day = (expr: string): string => `to_char(${expr}, 'YYYY-MM-DD')`;
// A stay is at most 60 nights: a range on departure (or on the nights stayed) also bounds arrival_date, so the
// arrival index reads the range and never the property's whole history.
const roomCount = `(select count(*) from reservation_rooms rr where rr.property_id = r.property_id and rr.reservation_id = r.id)::int`;

export const reports: readonly ReportDefinition[] = [
  {
    id: "arrivals",
    name: "Arrivals",
    description: "Reservations arriving between start and end (every status but CANCELLED).",
    columns: [
      col("arrivalDate", "Arrival", "date"),
      col("code", "Reservation", "text"),
      col("holderName", "Guest", "text"),
      col("status", "Status", "text"),
      col("rooms", "Rooms", "integer"),
      col("adults", "Adults", "integer"),
      col("children", "Children", "integer"),
      col("departureDate", "Departure", "date"),
      col("totalMinor", "Total", "money"),
    ],
    sql: `select ${day("r.arrival_date")} as "arrivalDate", r.code, r.holder_name as "holderName", r.status, ${roomCount} as rooms, r.adults, r.children,
        ${day("r.departure_date")} as "departureDate", r.total_minor::text as "totalMinor", count(*) over () as total
      from reservations r
      where r.property_id = $1 and r.arrival_date between $2::date and $3::date and r.status <> 'CANCELLED'
      order by r.arrival_date, r.code limit $4`,
  },
  {
    id: "departures",
    name: "Departures",
    description:
      "Reservations departing between start and end that stay or stayed (TENTATIVE, GUARANTEED, IN_HOUSE, CHECKED_OUT).",
    columns: [
      col("departureDate", "Departure", "date"),
      col("code", "Reservation", "text"),
      col("holderName", "Guest", "text"),
      col("status", "Status", "text"),
      col("rooms", "Rooms", "integer"),
      col("arrivalDate", "Arrival", "date"),
      col("totalMinor", "Total", "money"),
    ],
    sql: `select ${day("r.departure_date")} as "departureDate", r.code, r.holder_name as "holderName", r.status, ${roomCount} as rooms,
        ${day("r.arrival_date")} as "arrivalDate", r.total_minor::text as "totalMinor", count(*) over () as total
      from reservations r
      where r.property_id = $1 and r.departure_date between $2::date and $3::date and r.arrival_date between $2::date - 60 and $3::date
        and r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE', 'CHECKED_OUT')
      order by r.departure_date, r.code limit $4`,
  },
  {
    id: "in_house",
    name: "In-house guests",
    description:
      "Checked-in stays (IN_HOUSE, or CHECKED_OUT since) with at least one night between start and end, with their rooms.",
    columns: [
      col("code", "Reservation", "text"),
      col("holderName", "Guest", "text"),
      col("roomNumbers", "Rooms", "text"),
      col("arrivalDate", "Arrival", "date"),
      col("departureDate", "Departure", "date"),
      col("status", "Status", "text"),
      col("adults", "Adults", "integer"),
      col("children", "Children", "integer"),
    ],
    sql: `select r.code, r.holder_name as "holderName",
        coalesce((select string_agg(rm.number, ', ' order by rm.number) from reservation_rooms rr join rooms rm on rm.property_id = rr.property_id and rm.id = rr.room_id
                   where rr.property_id = r.property_id and rr.reservation_id = r.id), '') as "roomNumbers",
        ${day("r.arrival_date")} as "arrivalDate", ${day("r.departure_date")} as "departureDate", r.status, r.adults, r.children, count(*) over () as total
      from reservations r
      where r.property_id = $1 and r.status in ('IN_HOUSE', 'CHECKED_OUT') and r.arrival_date between $2::date - 60 and $3::date and r.departure_date > $2::date
      order by r.arrival_date, r.code limit $4`,
  },
  {
    id: "occupancy_by_day",
    name: "Occupancy by day",
    description:
      "Every night between start and end: sellable rooms, rooms sold (GUARANTEED, IN_HOUSE, CHECKED_OUT), occupancy, ADR and room revenue on the books.",
    columns: [
      col("date", "Date", "date"),
      col("roomsAvailable", "Sellable rooms", "integer"),
      col("roomsSold", "Rooms sold", "integer"),
      col("occupancyBp", "Occupancy", "basis_points"),
      col("adrMinor", "ADR", "money"),
      col("revenueMinor", "Room revenue", "money"),
    ],
    sql: "occupancy",
  },
  {
    id: "revenue_by_day",
    name: "Revenue by day",
    description: "Charges posted to folios per business date between start and end: room nights, extras and their sum.",
    columns: [
      col("date", "Business date", "date"),
      col("roomMinor", "Rooms", "money"),
      col("extrasMinor", "Extras", "money"),
      col("totalMinor", "Total", "money"),
    ],
    sql: `select ${day("d.date")} as date, coalesce(sum(c.amount_minor) filter (where c.kind = 'ROOM'), 0)::text as "roomMinor",
        coalesce(sum(c.amount_minor) filter (where c.kind = 'EXTRA'), 0)::text as "extrasMinor", coalesce(sum(c.amount_minor), 0)::text as "totalMinor",
        count(*) over () as total
      from generate_series($2::date, $3::date, interval '1 day') as d(date)
      left join folio_charges c on c.property_id = $1 and c.business_date = d.date::date
      group by d.date order by d.date limit $4`,
  },
  {
    id: "payments_by_method",
    name: "Payments by method",
    description: "Payments posted between start and end per payment method: payments, reversals and the net amount.",
    columns: [
      col("method", "Method", "text"),
      col("kind", "Kind", "text"),
      col("payments", "Payments", "integer"),
      col("reversals", "Reversals", "integer"),
      col("amountMinor", "Net amount", "money"),
    ],
    sql: `select p.method_code as method, p.method_kind as kind, count(*) filter (where p.amount_minor > 0)::int as payments,
        count(*) filter (where p.amount_minor < 0)::int as reversals, sum(p.amount_minor)::text as "amountMinor", count(*) over () as total
      from folio_payments p
      where p.property_id = $1 and p.business_date between $2::date and $3::date
      group by p.method_code, p.method_kind order by p.method_code, p.method_kind limit $4`,
  },
  {
    id: "cancellations",
    name: "Cancellations",
    description: "Reservations cancelled between start and end (the day in the property's time zone).",
    columns: [
      col("cancelledDate", "Cancelled", "date"),
      col("code", "Reservation", "text"),
      col("holderName", "Guest", "text"),
      col("source", "Source", "text"),
      col("channel", "Channel", "text"),
      col("arrivalDate", "Arrival", "date"),
      col("departureDate", "Departure", "date"),
      col("totalMinor", "Total", "money"),
    ],
    sql: `select ${day("(r.cancelled_at at time zone p.time_zone)::date")} as "cancelledDate", r.code, r.holder_name as "holderName", r.source,
        coalesce(r.channel, '') as channel, ${day("r.arrival_date")} as "arrivalDate", ${day("r.departure_date")} as "departureDate",
        r.total_minor::text as "totalMinor", count(*) over () as total
      from reservations r join properties p on p.id = r.property_id
      where r.property_id = $1 and r.status = 'CANCELLED'
        and r.cancelled_at >= ($2::date::timestamp at time zone p.time_zone) and r.cancelled_at < (($3::date + 1)::timestamp at time zone p.time_zone)
      order by r.cancelled_at, r.code limit $4`,
  },
];
