// @hotelops/sdk for Node: Connect, gRPC and gRPC-Web clients, session and token helpers, webhook verification.
export * from "./common.ts";
export { createHotelOpsClient, createHotelOpsTransport } from "./client.ts";
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookFailure } from "./webhooks.ts";
export { verifyStandardWebhook, type WebhookHeaders } from "./standard-webhooks.ts";
