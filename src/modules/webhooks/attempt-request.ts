import type { Clock } from "../../lib/clock.ts";
import type { EventDataOf } from "../events/index.ts";
import { AddressRejected, verifyTarget, type AddressPolicy, type Resolver, type VerifiedTarget } from "./address.ts";
import type { Claimed } from "./deliveries.repository.ts";
import { deliveryHeaders, envelopeBody, maxBodyBytes } from "./envelope.ts";
import { partnerDomainEventTypes, testEventType } from "./event-types.ts";
import { ed25519Aad, type SecretBox } from "./secrets.ts";
import type { SendResult } from "./sender.ts";
import { ed25519PrivateKey, signingKeys, type SigningKeys } from "./standard-signature.ts";

/** Our room type code -> a partner client's code at one property (only the mapped ones). */
export type PartnerRoomTypeCodes = (clientId: string, propertyId: string) => Promise<Map<string, string>>;

interface RequestDeps {
  clock: Clock;
  box: SecretBox;
  resolver: Resolver;
  policy: AddressPolicy;
  /** A partner client's room type codes at a property (connectivity's mappings; app.ts passes them in). */
  partnerCodes: PartnerRoomTypeCodes;
}

/** An attempt's request, made and signed. */
export interface Ready {
  c: Claimed;
  body: Buffer;
  target: VerifiedTarget;
  headers: Record<string, string>;
  /** Spent preparing it (counts against the request's time budget). */
  preparedMs: number;
}

/** What attempts of one batch share: one body per event, one key set per address, one address check per URL. */
export interface BatchMemo {
  bodies: Map<string, Promise<Buffer | undefined>>;
  keys: Map<string, SigningKeys>;
  targets: Map<string, Promise<VerifiedTarget>>;
}

export const newBatchMemo = (): BatchMemo => ({ bodies: new Map(), keys: new Map(), targets: new Map() });

/**
 * Makes an attempt's request: the envelope body, the address check (at every attempt: DNS answers change) and
 * the signatures. What cannot be sent ends here as the attempt's result, without a request.
 */
export function createAttemptRequests(d: RequestDeps) {
  /**
   * A booking sent to a partner's callback address names its room types in the partner's codes (ours where it has
   * no mapping), as the partner's reads do; a hotel address gets the event as stored.
   */
  const inPartnerCodes = (c: Claimed): c is Claimed & { client_id: string } =>
    c.client_id !== null && !c.is_test && (partnerDomainEventTypes as readonly string[]).includes(c.event_type);

  async function dataOf(c: Claimed): Promise<unknown> {
    if (!inPartnerCodes(c)) return c.ev_data;
    const data = c.ev_data as EventDataOf<"reservation.created">;
    const codes = await d.partnerCodes(c.client_id, c.property_id);
    return { ...data, roomTypes: [...new Set(data.roomTypes.map((code) => codes.get(code) ?? code))].sort() };
  }

  async function bodyOf(c: Claimed): Promise<Buffer | undefined> {
    if (c.is_test) {
      return envelopeBody({
        id: c.event_id,
        type: testEventType,
        createdAt: c.created_at,
        occurredAt: c.created_at,
        propertyCode: c.property_code,
        data: {
          endpointId: c.endpoint_id,
          message: "Test event sent from the panel (connection verify).",
        } satisfies EventDataOf<"webhook.test">,
      });
    }
    if (c.ev_created_at === null || c.ev_occurred_at === null) return undefined;
    return envelopeBody({
      id: c.event_id,
      type: c.event_type,
      createdAt: c.ev_created_at,
      occurredAt: c.ev_occurred_at,
      propertyCode: c.property_code,
      data: await dataOf(c),
    });
  }

  function keysOf(c: Claimed, now: Date): SigningKeys {
    const overlap = c.previous_secret_expires_at !== null && c.previous_secret_expires_at > now;
    const secrets = [d.box.open(c.secret_sealed, c.endpoint_id)];
    if (overlap && c.previous_secret_sealed !== null) secrets.push(d.box.open(c.previous_secret_sealed, c.endpoint_id));
    const ed25519 = [];
    if (c.ed25519_key_sealed !== null)
      ed25519.push(ed25519PrivateKey(d.box.open(c.ed25519_key_sealed, ed25519Aad(c.endpoint_id))));
    if (overlap && c.ed25519_key_sealed !== null && c.previous_ed25519_key_sealed !== null) {
      ed25519.push(ed25519PrivateKey(d.box.open(c.previous_ed25519_key_sealed, ed25519Aad(c.endpoint_id))));
    }
    return signingKeys(secrets, ed25519);
  }

  /** The request of an attempt, ready to go: what remains is waiting for its slot and sending. */
  async function prepare(c: Claimed, now: Date, memo: BatchMemo): Promise<Ready | SendResult> {
    // One body per event, or per event and partner client where it is in the client's codes.
    const bodyKey = c.is_test ? c.id : inPartnerCodes(c) ? `${c.event_id}:${c.client_id}` : c.event_id;
    let made = memo.bodies.get(bodyKey);
    if (made === undefined) memo.bodies.set(bodyKey, (made = bodyOf(c)));
    const body = await made;
    if (body === undefined)
      return { httpStatus: null, durationMs: 0, errorClass: "connection", errorMessage: "the event no longer exists" };
    if (body.length > maxBodyBytes) {
      return {
        httpStatus: null,
        durationMs: 0,
        errorClass: "payload_too_large",
        errorMessage: `the event body is ${body.length} bytes; the limit is ${maxBodyBytes}`,
      };
    }
    const started = performance.now();
    let target;
    try {
      // The address rules hold at every attempt, not only at creation (DNS answers change): checked once per
      // URL and batch, whose attempts all start now.
      let check = memo.targets.get(c.url);
      if (check === undefined) memo.targets.set(c.url, (check = verifyTarget(c.url, d.policy, d.resolver)));
      target = await check;
    } catch (err) {
      if (!(err instanceof AddressRejected)) throw err;
      return {
        httpStatus: null,
        durationMs: Math.round(performance.now() - started),
        errorClass: "address_rejected",
        errorMessage: err.message,
      };
    }
    let keys = memo.keys.get(c.endpoint_id);
    if (keys === undefined) memo.keys.set(c.endpoint_id, (keys = keysOf(c, now)));
    // Signed now: the timestamp is at most the 2 s of a slot wait old when the request goes out.
    const headers = deliveryHeaders({
      body,
      keys,
      unixSeconds: Math.floor(d.clock.now().getTime() / 1000),
      eventId: c.event_id,
      eventType: c.is_test ? testEventType : c.event_type,
      deliveryId: c.id,
      attempt: c.attempts,
    });
    return { c, body, target, headers, preparedMs: performance.now() - started };
  }

  return { prepare };
}
