import { Migration0001Platform } from "./0001-platform.ts";
import { Migration0002CoreIdentity } from "./0002-core-identity.ts";
import { Migration0003Auth } from "./0003-auth.ts";
import { Migration0004InventoryReservations } from "./0004-inventory-reservations.ts";
import { Migration0005Webhooks } from "./0005-webhooks.ts";
import { Migration0006Platform } from "./0006-platform.ts";
import { Migration0007Folio } from "./0007-folio.ts";
import { Migration0008Connectivity } from "./0008-connectivity.ts";
import { Migration0009LoginChallenges } from "./0009-login-challenges.ts";
import { Migration0010ReportRuns } from "./0010-report-runs.ts";
import { Migration0011RoomTypeDaysByKey } from "./0011-room-type-days-by-key.ts";
import { Migration0012PriceOverride } from "./0012-price-override.ts";
import { Migration0013ChannelBookings } from "./0013-channel-bookings.ts";
import { Migration0014Ari } from "./0014-ari.ts";
import { Migration0015TokenLimits } from "./0015-token-limits.ts";
import { Migration0016ClientLastToken } from "./0016-client-last-token.ts";
import { Migration0017MessageAndEventNames } from "./0017-message-and-event-names.ts";
import { Migration0018SessionEmailVerified } from "./0018-session-email-verified.ts";
import { Migration0019WebhookReceivers } from "./0019-webhook-receivers.ts";
import { Migration0020FlatGrowth } from "./0020-flat-growth.ts";
import { Migration0021WebhookPacing } from "./0021-webhook-pacing.ts";
import { Migration0022FolioBalance } from "./0022-folio-balance.ts";
import { Migration0023DayRowsFillfactor } from "./0023-day-rows-fillfactor.ts";
import { Migration0024RoomLineArrival } from "./0024-room-line-arrival.ts";
import { Migration0025FrontDesk } from "./0025-front-desk.ts";
import { Migration0026RefundsAndUnchargedNights } from "./0026-refunds-and-uncharged-nights.ts";
import { Migration0027Overbooking } from "./0027-overbooking.ts";
import { Migration0028StayHistory } from "./0028-stay-history.ts";
import { Migration0029RefreshGrace } from "./0029-refresh-grace.ts";
import { Migration0031StayPolicies } from "./0031-stay-policies.ts";
import { Migration0033PropertyCodesAndEmails } from "./0033-property-codes-and-emails.ts";
import { Migration0030AuditTrail } from "./0030-audit-trail.ts";
import { Migration0034DepositsAndPolicySnapshots } from "./0034-deposits-and-policy-snapshots.ts";
import { Migration0035BookingDetails } from "./0035-booking-details.ts";
import { Migration0036PartnerEventsAge } from "./0036-partner-events-age.ts";
import { Migration0038Guests } from "./0038-guests.ts";
import { Migration0039InvoiceDocuments } from "./0039-invoice-documents.ts";
import { Migration0043GuestStays } from "./0043-guest-stays.ts";
import { Migration0044InvoiceDeliveries } from "./0044-invoice-deliveries.ts";
import { Migration0045AvailabilityCaps } from "./0045-availability-caps.ts";
import { Migration0047EventStream } from "./0047-event-stream.ts";
import { Migration0050GuestNameSearch } from "./0050-guest-name-search.ts";
import { Migration0048GuestReports } from "./0048-guest-reports.ts";
import { Migration0049FolioWindowsAndCityLedger } from "./0049-folio-windows-and-city-ledger.ts";
import { Migration0051OccupancyPrices } from "./0051-occupancy-prices.ts";
import { Migration0032PartnerCallbacks } from "./0032-partner-callbacks.ts";

/** Every migration, in order. Listed explicitly so nothing depends on file globbing at run time. */
export const migrations = [
  Migration0001Platform,
  Migration0002CoreIdentity,
  Migration0003Auth,
  Migration0004InventoryReservations,
  Migration0005Webhooks,
  Migration0006Platform,
  Migration0007Folio,
  Migration0008Connectivity,
  Migration0009LoginChallenges,
  Migration0010ReportRuns,
  Migration0011RoomTypeDaysByKey,
  Migration0012PriceOverride,
  Migration0013ChannelBookings,
  Migration0014Ari,
  Migration0015TokenLimits,
  Migration0016ClientLastToken,
  Migration0017MessageAndEventNames,
  Migration0018SessionEmailVerified,
  Migration0019WebhookReceivers,
  Migration0020FlatGrowth,
  Migration0021WebhookPacing,
  Migration0022FolioBalance,
  Migration0023DayRowsFillfactor,
  Migration0024RoomLineArrival,
  Migration0025FrontDesk,
  Migration0026RefundsAndUnchargedNights,
  Migration0027Overbooking,
  Migration0028StayHistory,
  Migration0029RefreshGrace,
  Migration0030AuditTrail,
  Migration0031StayPolicies,
  Migration0032PartnerCallbacks,
  Migration0033PropertyCodesAndEmails,
  Migration0034DepositsAndPolicySnapshots,
  Migration0035BookingDetails,
  Migration0036PartnerEventsAge,
  Migration0038Guests,
  Migration0039InvoiceDocuments,
  Migration0043GuestStays,
  Migration0044InvoiceDeliveries,
  Migration0045AvailabilityCaps,
  Migration0047EventStream,
  Migration0048GuestReports,
  Migration0049FolioWindowsAndCityLedger,
  Migration0050GuestNameSearch,
  Migration0051OccupancyPrices,
];
