import { Migration } from "@mikro-orm/migrations";

/**
 * Indexes that keep reads and the history purge flat as the history grows (the growth bench measures them). Each
 * is partial: it holds the few rows a query looks for (today's work), not the history around them.
 * - finished deliveries by age: the 30-day purge finds each batch without scanning every delivery;
 * - IN_HOUSE reservations: the dashboard's in-house count and the night audit's departures still checked in;
 * - IN_HOUSE and CHECKED_OUT reservations by departure: the dashboard's departures of the day;
 * - TENTATIVE and GUARANTEED reservations by arrival: the night audit's arrivals still waiting (arrival on or before
 *   the business date) without reading every earlier arrival;
 * - cancelled reservations by cancellation time: the cancellations report of a period;
 * - folio charges and payments by business date: the dashboard's revenue of the day, the revenue and payments
 *   reports (read through the folio index, every charge the hotel ever posted; found by reading the plans, the
 *   growth bench writes no folios).
 */
export class Migration0020FlatGrowth extends Migration {
  override name = "0020-flat-growth";

  override up(): void {
    this.addSql(`
create index webhook_deliveries_finished_age on webhook_deliveries ((coalesce(last_attempt_at, created_at))) where status <> 'pending';
create index reservations_in_house on reservations (property_id) where status = 'IN_HOUSE';
create index reservations_departing on reservations (property_id, departure_date) where status in ('IN_HOUSE', 'CHECKED_OUT');
create index reservations_to_arrive on reservations (property_id, arrival_date) where status in ('TENTATIVE', 'GUARANTEED');
create index reservations_cancelled on reservations (property_id, cancelled_at) where status = 'CANCELLED';
create index folio_charges_by_date on folio_charges (property_id, business_date);
create index folio_payments_by_date on folio_payments (property_id, business_date);
`);
  }
}
