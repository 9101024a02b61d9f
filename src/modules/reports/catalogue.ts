import { paymentsByMethodReport, revenueByDayReport } from "../folio/index.ts";
import {
  arrivalsReport,
  cancellationsReport,
  departuresReport,
  inHouseReport,
  type ReportQuery,
} from "../reservations/index.ts";

/**
 * The report catalogue: what each report is and the owner's query that answers it (reservations, folio). Every
 * query takes the property id, the first and last day (both included) and a row limit, and returns the columns
 * under their keys in catalogue order plus `total` (the row count before the limit). Dates are `YYYY-MM-DD`;
 * money is integer minor units rendered as text (bigint).
 */
type ColumnType = "date" | "text" | "integer" | "money" | "basis_points";

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
  /** The owner's query, or `occupancy` for the by-day figures computed with the forecast's query. */
  rows: ReportQuery | "occupancy";
}

const col = (key: string, label: string, type: ColumnType): ReportColumn => ({ key, label, type });

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
    rows: arrivalsReport,
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
    rows: departuresReport,
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
    rows: inHouseReport,
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
    rows: "occupancy",
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
    rows: revenueByDayReport,
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
    rows: paymentsByMethodReport,
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
    rows: cancellationsReport,
  },
];
