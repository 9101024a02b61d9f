import type { Queryable } from "../../db/queryable.ts";

/**
 * Takes the property's rate lock until the transaction ends: every writer of prices or restrictions (staff
 * SetPrices and SetRestrictions, partner ARI writes) takes it first, in a statement of its own, so they take turns
 * per property. A batch write then never meets a row another writer added since its statement began, and two
 * batches never lock the same rows in opposite orders (no deadlock). A transaction lock: released at commit or
 * rollback, safe behind a transaction-pooling proxy.
 */
export async function lockRates(q: Queryable, propertyId: string): Promise<void> {
  await q.query("select pg_advisory_xact_lock(hashtextextended('rates:' || $1::text, 0))", [propertyId]);
}
