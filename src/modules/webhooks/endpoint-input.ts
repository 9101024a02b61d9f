import { invalidField } from "../../errors.ts";
import { isUuid } from "../../lib/ids.ts";
import { AddressRejected, verifyTarget, type AddressPolicy, type Resolver } from "./address.ts";
import { isSubscribable, subscribableEventTypes, testEventType } from "./event-types.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** What staff send for a webhook address, and its checks (each refusal names the field). */

export const defaultMaxPerSecond = 50;
export const defaultMaxConcurrency = 10;
const maxDescription = 500;
const deliveryStatuses = ["pending", "succeeded", "failed", "cancelled"];

/** Who acts: the staff user and the session's active property. */
export interface StaffActor {
  propertyId: string;
  userId: string;
  /** The handle of a keyed call (`keyedOf`): its change is opened with `transact(work, actor.keyed)`. */
  keyed?: Keyed | undefined;
}

/** How an address is paced and signed (absent: defaults at creation, unchanged on update). */
interface EndpointDelivery {
  /** true: deliveries also carry an ed25519 `v1a` signature; the address shows its `whpk_` public key. */
  ed25519?: boolean;
  /** Deliveries started per second, 1-1000 (default 50). */
  maxPerSecond?: number;
  /** Requests in flight at once, 1-64 (default 10). */
  maxConcurrency?: number;
}

export interface EndpointInput extends EndpointDelivery {
  url: string;
  eventTypes: readonly string[];
  description?: string;
}

export interface EndpointPatch extends EndpointDelivery {
  url?: string;
  /** Empty or absent: unchanged (an address always has at least one type). */
  eventTypes?: readonly string[];
  description?: string;
}

/** A page of an address's history as asked for. */
export interface HistoryPage {
  cursor?: string;
  limit?: number;
  deliveryStatus?: string;
  eventType?: string;
}

/** The address rules hold at creation and at every change of the url; answers the url in its normal form. */
export async function checkUrl(url: string, policy: AddressPolicy, resolver: Resolver): Promise<string> {
  try {
    await verifyTarget(url, policy, resolver);
  } catch (err) {
    if (err instanceof AddressRejected) throw invalidField("url", err.message, "validation_failed");
    throw err;
  }
  return new URL(url).toString();
}

export function checkTypes(types: readonly string[]): string[] {
  const wanted = [...new Set(types.filter((t) => t !== testEventType))];
  if (wanted.length === 0)
    throw invalidField(
      "eventTypes",
      `choose at least one of ${subscribableEventTypes.join(", ")}`,
      "validation_failed",
    );
  for (const t of wanted)
    if (!isSubscribable(t)) throw invalidField("eventTypes", `unknown event type "${t}"`, "validation_failed");
  return wanted;
}

export function checkDescription(text: string | undefined): string {
  const value = (text ?? "").trim();
  if (value.length > maxDescription)
    throw invalidField("description", `at most ${maxDescription} characters`, "validation_failed");
  return value;
}

export function checkLimit(
  field: "maxPerSecond" | "maxConcurrency",
  value: number | undefined,
  max: number,
  current: number,
): number {
  if (value === undefined) return current;
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw invalidField(field, `an integer from 1 to ${max}`, "validation_failed");
  return value;
}

/** The history page's filters, checked. */
export function checkHistoryFilters(page: HistoryPage): {
  deliveryStatus: string | undefined;
  eventType: string | undefined;
} {
  const deliveryStatus = page.deliveryStatus ? page.deliveryStatus.toLowerCase() : undefined;
  if (deliveryStatus !== undefined && !deliveryStatuses.includes(deliveryStatus)) {
    throw invalidField("deliveryStatus", `one of ${deliveryStatuses.map((s) => s.toUpperCase()).join(", ")}`);
  }
  const eventType = page.eventType || undefined;
  if (eventType !== undefined && eventType !== testEventType && !isSubscribable(eventType))
    throw invalidField("eventType", `unknown event type "${eventType}"`);
  return { deliveryStatus, eventType };
}

export const encodeCursor = (last: { startedAt: Date; id: string }): string =>
  Buffer.from(`${last.startedAt.toISOString()}|${last.id}`).toString("base64url");

export function decodeCursor(cursor: string): { startedAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const startedAt = new Date(at ?? "");
  if (id === undefined || !isUuid(id) || Number.isNaN(startedAt.getTime()))
    throw invalidField("cursor", "not a cursor of this list");
  return { startedAt, id };
}
