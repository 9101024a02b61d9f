import { Migration } from "@mikro-orm/migrations";

/**
 * Channel bookings keep the sales channel the provider sent ("Booking.com") and are identified by
 * (provider, channel, external_reference): two OTAs behind one channel manager may reuse a reference number.
 * `provider` is the connectivity provider code (null for bookings that did not come through a provider).
 * `rate_difference_minor`: a channel booking keeps the channel's amounts; this is their total minus the stay at
 * our daily prices (null when equal or not a channel-priced booking). `restriction_overrides`: the restrictions a
 * channel booking broke, accepted because the channel had already sold it (for staff to review).
 * Bookings made before this migration carried the provider in `channel`; the channel they were sent with comes
 * from the first inbound message that created them.
 */
export class Migration0013ChannelBookings extends Migration {
  override name = "0013-channel-bookings";

  override up(): void {
    this.addSql(`
      alter table reservations add column provider text;
      alter table reservations add column rate_difference_minor bigint;
      alter table reservations add column restriction_overrides text[] not null default '{}';
      update reservations r
         set provider = r.channel,
             channel = (select nullif(e.payload ->> 'channel', '') from reservation_events e where e.reservation_id = r.id order by e.seq limit 1)
       where r.source = 'CHANNEL' and r.channel is not null
         and exists (select 1 from reservation_events e where e.reservation_id = r.id and e.provider = r.channel);
      drop index reservations_external_ref;
      create unique index reservations_external_ref on reservations (property_id, (coalesce(provider, '')), (coalesce(channel, '')), external_reference)
        where external_reference is not null;
    `);
  }
}
