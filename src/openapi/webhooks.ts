import { eventCatalogue, type CatalogueType } from "../modules/events/index.ts";

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type (the envelope with that type's exact `data`
 * schema and an example), built from the event catalogue the payload builders are typed from. Kept apart from
 * the REST document builder: `withWebhooks(doc)` adds it to any document. Each schema is inline (no
 * components), so the REST document's components stay exactly those its paths use.
 */
export function withWebhooks(doc: Record<string, unknown>): Record<string, unknown> {
  const webhooks: Record<string, unknown> = {};
  for (const type of Object.keys(eventCatalogue).sort() as CatalogueType[]) {
    const entry = eventCatalogue[type];
    webhooks[type] = {
      post: {
        operationId: `webhook_${type.replace(/\W/g, "_")}`,
        summary: entry.summary,
        description: deliveryDescription,
        parameters: headerParameters,
        requestBody: {
          required: true,
          content: { "application/json": { schema: envelopeSchema(type), example: exampleEnvelope(type) } },
        },
        responses: receiverResponses,
        // no credentials: the receiver authenticates the body by its signature headers (above)
        security: [],
      },
    };
  }
  return { ...doc, webhooks };
}

function envelopeSchema(type: CatalogueType): Record<string, unknown> {
  return {
    type: "object",
    description: `The ${type} event as delivered.`,
    properties: {
      id: { type: "string", format: "uuid", description: "The event id (also `Service-Event-Id` and `webhook-id`); the same on every attempt, resend and recovery." },
      type: { type: "string", const: type },
      apiVersion: { type: "string", const: "v1" },
      createdAt: { type: "string", format: "date-time", description: "When the event was recorded; never before occurredAt." },
      occurredAt: { type: "string", format: "date-time", description: "When the change happened." },
      property: { type: "object", properties: { code: { type: "string" } }, required: ["code"], additionalProperties: false },
      data: eventCatalogue[type].data,
    },
    required: ["id", "type", "apiVersion", "createdAt", "occurredAt", "property", "data"],
    additionalProperties: false,
  };
}

function exampleEnvelope(type: CatalogueType): Record<string, unknown> {
  return {
    id: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a99",
    type,
    apiVersion: "v1",
    createdAt: "2027-01-10T14:02:11.250Z",
    occurredAt: "2027-01-10T14:02:11.243Z",
    property: { code: "DEMO-IST" },
    data: eventCatalogue[type].example,
  };
}

const deliveryDescription = [
  "`POST` to each OPEN address subscribed to the type (`webhook.test` is always sent). Verify the raw body before parsing it, with either scheme:",
  "",
  "- `Service-Signature: t=<unix>,v1=<hex>`: HMAC-SHA256 of `<t>.<body>` keyed with the UTF-8 bytes of the whole secret (`whsec_` included); Stripe's `webhooks.constructEvent` verifies it.",
  "- Standard Webhooks: `webhook-signature` holds space-separated `v1,<base64>` (HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the bytes base64-decoded after `whsec_`; the `standardwebhooks` and Svix libraries verify it) and, for an address with ed25519 on, `v1a,<base64>` (ed25519 over the same content, verified with the address's `whpk_` public key).",
  "",
  "Accept any listed signature (two of each during the 24 h after a rotation) and reject timestamps more than 5 minutes away. Answer 2xx within 10 s; anything else is retried after about 30 s, 2 min, 8 min, 32 min, 2 h, 8.5 h and 12 h (+-10 %, at most 8 attempts, never after 24 h).",
].join("\n");

const header = (name: string, description: string, example: string) => ({ name, in: "header", required: true, description, schema: { type: "string" }, example });
const headerParameters = [
  header("Service-Signature", "`t=<unix seconds>,v1=<hex>[,v1=<hex of the previous secret>]`.", "t=1767225600,v1=22d94433e69ebfb137b1c6bc40db902e3584eb043ce28a80c6e46a4f8874022b"),
  header("Service-Event-Id", "The event id.", "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a99"),
  header("Service-Event-Type", "The event type.", "reservation.created"),
  header("Service-Delivery-Id", "This delivery (a resend or recovery is a new delivery of the same event).", "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a98"),
  header("Service-Delivery-Attempt", "1 for the first attempt of a delivery.", "1"),
  header("webhook-id", "Standard Webhooks: the event id.", "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a99"),
  header("webhook-timestamp", "Standard Webhooks: unix seconds (the same as `t`).", "1767225600"),
  header("webhook-signature", "Standard Webhooks: space-separated `v1,<base64>` and, with ed25519, `v1a,<base64>`.", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="),
];

const receiverResponses = {
  "2XX": { description: "Received. Any 2xx counts as success." },
  "410": { description: "Gone: the address is closed at once (its creator gets an e-mail and a panel notification)." },
  "429": { description: "Too many: retried no earlier than `Retry-After` (seconds or an HTTP date), within the 24 h window." },
  "503": { description: "Unavailable: retried no earlier than `Retry-After`, within the 24 h window." },
  default: { description: "Any other answer, a timeout (10 s) or a connection or TLS error: retried on the schedule." },
};
