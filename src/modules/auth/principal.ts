import { createContextKey } from "@connectrpc/connect";

/** The catalogue of staff permissions (roles are data; the docs point here). @public */
export const permissions = [
  "dashboard.view",
  "reservations.view",
  "reservations.create",
  "reservations.update",
  "reservations.cancel",
  "reservations.override_price",
  "reservations.overbook",
  "frontdesk.check_in",
  "frontdesk.check_out",
  "folio.view",
  "folio.post",
  "invoices.issue",
  // the city ledger: company and agency accounts, settling folios to them, their payments
  "accounts.manage",
  "reports.read",
  "night_audit.run",
  "integrations.manage",
  "rates.manage",
  "rooms.manage",
  "audit.read",
  "guests.read_sensitive",
  "guests.merge",
  "guests.erase",
  "guests.report",
] as const;

export const scopes = [
  "availability.read",
  "reservations.read",
  "mappings.read",
  "reservations.write",
  "ari.read",
  "ari.write",
  // the hotel lets the partner manage allotment: availability caps in its ARI writes
  "allotment.write",
] as const;

/**
 * The authenticated caller of one request, resolved once by the auth interceptor.
 * `propertyIds` is the whole reach of the caller: staff sessions reach only their active property,
 * clients the properties granted to them. Repositories take a property id that must come from here.
 */
export type Principal =
  | {
      kind: "staff";
      userId: string;
      sessionId: string;
      activePropertyId: string;
      propertyIds: readonly string[];
      permissions: ReadonlySet<string>;
    }
  | {
      kind: "partner" | "internal";
      clientId: string;
      provider: string;
      environment: "test" | "live";
      propertyIds: readonly string[];
      scopes: ReadonlySet<string>;
    };

export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "hotelops principal" });
