import type { CallbackDelivery } from "../webhooks/index.ts";

/**
 * What the partner face needs of the partner callbacks (webhook addresses owned by a client; the webhooks module
 * implements them and app.ts passes them in): the client's delivery history and who listens for a type.
 */
export interface PartnerCallbackReads {
  history(
    clientId: string,
    page: { cursor: string; limit: number; eventType: string },
  ): Promise<{ deliveries: CallbackDelivery[]; nextCursor: string }>;
  listeners(type: string, propertyIds: readonly string[]): Promise<Map<string, string[]>>;
}
