import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { queues } from "../../src/jobs/queues.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";

/**
 * A reservation event sent with an Idempotency-Key is written by the batched row writer together with its key's
 * stored outcome (one transaction per batch, not one held transaction per event). ROLE=api: no worker touches
 * the messages, so each row still carries the transaction that inserted it (xmin).
 */
let app: TestApp;
let property: { id: string; code: string };
let token: string;

const cancel = (externalReference: string) => ({ eventType: "CANCELLED", externalReference });

async function post(body: unknown, key: string): Promise<{ status: number; text: string; replayed: string | null }> {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), replayed: res.headers.get("idempotency-replayed") };
}

async function messagesOf(prefix: string): Promise<{ id: string; external_reference: string; xmin: string }[]> {
  return (
    await app.db.pool.query<{ id: string; external_reference: string; xmin: string }>(
      "select id, external_reference, xmin::text from partner_messages where property_id = $1 and external_reference like $2",
      [property.id, `${prefix}%`],
    )
  ).rows;
}

async function jobsOf(prefix: string): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: number }>(
    "select count(*)::int as n from pgboss.job where name = $1 and data->>'externalReference' like $2",
    [queues.partnerMessages, `${prefix}%`],
  );
  return rows[0]!.n;
}

/** The transaction that completed each key (its outcome row's xmin). */
async function keyTransactions(keys: string[]): Promise<Map<string, string>> {
  const { rows } = await app.db.pool.query<{ key: string; state: string; xmin: string }>(
    "select key, state, xmin::text from idempotency_keys where key = any($1::text[])",
    [keys],
  );
  expect(rows.every((r) => r.state === "done")).toBe(true);
  return new Map(rows.map((r) => [r.key, r.xmin]));
}

beforeAll(async () => {
  app = await startTestApp({ env: { ROLE: "api" } });
  property = await createTestProperty(app, { code: "KEYED-1", sandbox: true });
  token = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [property.code],
      scopes: ["reservations.write"],
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("keyed reservation events are batched with their stored outcomes", () => {
  it("REST: 30 concurrent keyed events commit in fewer transactions than events, each message in its key's transaction; replays return the stored answer and write no second message", async () => {
    const sent = Array.from({ length: 30 }, (_, i) => ({ key: randomUUID(), ref: `REST-${i}` }));
    const first = await Promise.all(sent.map((s) => post(cancel(s.ref), s.key)));
    expect(first.map((r) => r.status)).toEqual(sent.map(() => 202));
    expect(first.every((r) => r.replayed === null)).toBe(true);
    const eventIds = first.map((r) => (JSON.parse(r.text) as { eventId: string }).eventId);

    const rows = await messagesOf("REST-");
    expect(rows.length).toBe(30);
    const byRef = new Map(rows.map((r) => [r.external_reference, r]));
    const keyXmin = await keyTransactions(sent.map((s) => s.key));
    for (const [i, s] of sent.entries()) {
      const row = byRef.get(s.ref)!;
      expect(row.id).toBe(eventIds[i]);
      // The message and its key's outcome were committed by one transaction.
      expect(keyXmin.get(s.key)).toBe(row.xmin);
    }
    // Batched: several events share a transaction (one held transaction per event would give 30).
    expect(new Set(rows.map((r) => r.xmin)).size).toBeLessThan(30);

    const again = await Promise.all(sent.map((s) => post(cancel(s.ref), s.key)));
    for (const [i, r] of again.entries()) {
      expect(r.status).toBe(202);
      expect(r.replayed).toBe("true");
      expect(r.text).toBe(first[i]!.text);
    }
    expect((await messagesOf("REST-")).length).toBe(30);
    expect(await jobsOf("REST-")).toBe(30);
  });

  it("Connect and gRPC: concurrent keyed events and their replays give one message and one job per key", async () => {
    for (const face of ["connect", "grpc"] as const) {
      const call = (ref: string, key: string) => {
        const headers = { authorization: `Bearer ${token}`, "idempotency-key": key };
        const transport =
          face === "grpc"
            ? createGrpcTransport({ baseUrl: app.baseUrl })
            : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
        return createClient(ConnectivityService, transport).createReservationEvent(
          { propertyCode: property.code, ...cancel(ref) },
          { headers },
        );
      };
      const prefix = `${face.toUpperCase()}-`;
      const sent = Array.from({ length: 20 }, (_, i) => ({ key: randomUUID(), ref: `${prefix}${i}` }));
      const first = await Promise.all(sent.map((s) => call(s.ref, s.key)));
      const replays = await Promise.all(sent.map((s) => call(s.ref, s.key)));
      expect(replays.map((r) => r.eventId)).toEqual(first.map((r) => r.eventId));
      const rows = await messagesOf(prefix);
      expect(rows.map((r) => r.id).sort()).toEqual(first.map((r) => r.eventId).sort());
      const keyXmin = await keyTransactions(sent.map((s) => s.key));
      const byId = new Map(rows.map((r) => [r.id, r.xmin]));
      for (const [i, s] of sent.entries()) expect(keyXmin.get(s.key)).toBe(byId.get(first[i]!.eventId));
      expect(await jobsOf(prefix)).toBe(20);
    }
  });

  it("an event whose outcome cannot be recorded fails alone: nothing of it is written, the others of its batch commit, and its retry runs once", async () => {
    const refused = randomUUID();
    await app.db.pool.query(`create or replace function test_refuse_key() returns trigger language plpgsql as $$
      begin if new.state = 'done' and new.key = '${refused}' then raise exception 'bookkeeping refused'; end if; return new; end $$`);
    await app.db.pool.query(
      "create trigger test_refuse_key before update on idempotency_keys for each row execute function test_refuse_key()",
    );
    const sent = Array.from({ length: 20 }, (_, i) => ({ key: i === 7 ? refused : randomUUID(), ref: `ONE-${i}` }));
    let first: Awaited<ReturnType<typeof post>>[];
    try {
      first = await Promise.all(sent.map((s) => post(cancel(s.ref), s.key)));
    } finally {
      await app.db.pool.query("drop trigger test_refuse_key on idempotency_keys");
    }
    expect(first[7]!.status).toBeGreaterThanOrEqual(500);
    expect(first.filter((_, i) => i !== 7).map((r) => r.status)).toEqual(sent.slice(1).map(() => 202));
    expect((await messagesOf("ONE-")).map((r) => r.external_reference).sort()).toEqual(
      sent
        .filter((_, i) => i !== 7)
        .map((s) => s.ref)
        .sort(),
    );
    expect(await jobsOf("ONE-7")).toBe(0);

    const retry = await post(cancel("ONE-7"), refused);
    expect(retry.status).toBe(202);
    expect(retry.replayed).toBeNull();
    const replay = await post(cancel("ONE-7"), refused);
    expect(replay.replayed).toBe("true");
    expect(replay.text).toBe(retry.text);
    expect((await messagesOf("ONE-7")).length).toBe(1);
    expect(await jobsOf("ONE-7")).toBe(1);
  });
});
