import { signatureHeader } from "./secrets.ts";
import { standardSignature, type SigningKeys } from "./standard-signature.ts";

/** Largest request body sent; an event that would exceed it is recorded failed, never truncated. */
export const maxBodyBytes = 256 * 1024;
const userAgent = "Service-Webhooks/1.0";

export interface EnvelopeInput {
  id: string;
  type: string;
  createdAt: Date;
  occurredAt: Date;
  propertyCode: string;
  data: unknown;
}

/** The spec's event envelope; timestamps ISO 8601 UTC with milliseconds. */
export function envelopeBody(e: EnvelopeInput): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: e.id,
      type: e.type,
      apiVersion: "v1",
      createdAt: e.createdAt.toISOString(),
      occurredAt: e.occurredAt.toISOString(),
      property: { code: e.propertyCode },
      data: e.data,
    }),
    "utf8",
  );
}

/**
 * The delivery request headers (Service-*) and the Standard Webhooks headers beside them
 * (`webhook-id` = the event id, `webhook-timestamp` = the same `t`, `webhook-signature`).
 */
export function deliveryHeaders(input: {
  body: Buffer;
  keys: SigningKeys;
  unixSeconds: number;
  eventId: string;
  eventType: string;
  deliveryId: string;
  attempt: number;
}): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": userAgent,
    "service-signature": signatureHeader(
      input.keys.hmac.map((k) => k.service),
      input.unixSeconds,
      input.body,
    ),
    "service-event-id": input.eventId,
    "service-event-type": input.eventType,
    "service-delivery-id": input.deliveryId,
    "service-delivery-attempt": String(input.attempt),
    "webhook-id": input.eventId,
    "webhook-timestamp": String(input.unixSeconds),
    "webhook-signature": standardSignature(input.keys, input.eventId, input.unixSeconds, input.body),
  };
}
