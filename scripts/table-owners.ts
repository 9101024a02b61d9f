// Which module owns each table: only that module's files may name the table in SQL (docs/contributors/modules-and-tables.md).
// scripts/check-tables.ts enforces it; src/db/migrations create the tables and are the one exception.
export const tableOwners: Readonly<Record<string, string>> = {
  // properties: the hotel, its group, staff users, memberships and roles
  hotel_groups: "properties",
  properties: "properties",
  users: "properties",
  memberships: "properties",
  roles: "properties",
  // auth: API clients, signing keys, staff sessions and their tokens, login codes
  api_clients: "auth",
  api_client_properties: "auth",
  signing_keys: "auth",
  staff_sessions: "auth",
  refresh_tokens: "auth",
  login_challenges: "auth",
  // inventory: room types, rooms, rates, prices and the sold/blocked counters per day
  room_types: "inventory",
  rooms: "inventory",
  rate_plans: "inventory",
  rate_plan_room_types: "inventory",
  daily_prices: "inventory",
  daily_occupancy_prices: "inventory",
  room_type_days: "inventory",
  room_blocks: "inventory",
  room_out_of_order: "inventory",
  room_type_overbookings: "inventory",
  rate_restrictions: "inventory",
  ari_counters: "inventory",
  ari_changes: "inventory",
  // reservations
  reservations: "reservations",
  reservation_rooms: "reservations",
  reservation_room_moves: "reservations",
  reservation_payments_received: "reservations",
  late_checkout_rules: "reservations",
  property_counters: "reservations",
  reservation_code_counters: "reservations",
  // outbound domain events (what happened here, published by webhooks)
  domain_events: "events",
  // outbound events meant for one partner client (message outcomes, ARI pushed in its codes)
  partner_events: "events",
  // connectivity: inbound partner messages (reservation messages partners send) and the partners' code mappings
  partner_messages: "connectivity",
  provider_mappings: "connectivity",
  ari_push_cursors: "connectivity",
  folios: "folio",
  folio_charges: "folio",
  folio_payments: "folio",
  folio_counters: "folio",
  night_audit_uncharged_nights: "night-audit",
  invoices: "invoices",
  invoice_lines: "invoices",
  invoice_counters: "invoices",
  invoice_items: "invoices",
  invoice_tax_rates: "invoices",
  invoice_issuers: "invoices",
  invoice_documents: "invoices",
  invoice_deliveries: "invoices",
  invoice_returns: "invoices",
  // platform: request guards and the platform-wide switch
  idempotency_keys: "platform",
  rate_limits: "platform",
  platform_settings: "platform",
  webhook_endpoints: "webhooks",
  webhook_deliveries: "webhooks",
  webhook_attempts: "webhooks",
  webhook_recoveries: "webhooks",
  webhook_pacing: "webhooks",
  notifications: "notifications",
  report_runs: "reports",
  // audit: the trail of changes (monthly partitions audit_changes_yYYYYmMM and audit_changes_default)
  audit_changes: "audit",
  // guests: guest profiles of a hotel group, personal data sealed at rest
  guests: "guests",
  // guest_stays: the guests linked to room lines (occupants)
  guest_stays: "guests",
  audit_changes_default: "audit",
};
