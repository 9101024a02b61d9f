import type pg from "pg";
import type { Transact } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { poolQueryable } from "../../db/queryable.ts";
import { clientGrantedSql, findClient } from "../auth/index.ts";
import { AddressRejected, verifyTarget, type AddressPolicy, type Resolver } from "./address.ts";
import { endpointColumns, toEndpoint, type Endpoint, type EndpointRow } from "./endpoints.repository.ts";
import { partnerCallbackEventTypes, isPartnerCallbackType } from "./event-types.ts";
import { newSigningSecret, type SecretBox } from "./secrets.ts";
import { defaultMaxConcurrency, defaultMaxPerSecond } from "./endpoint-input.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** Callback addresses one partner client may have (all properties together). */
const maxCallbacksPerClient = 10;
/** Largest page of a partner's delivery history; 50 when the caller names none. */
const maxCallbackHistoryPage = 200;
const historyDays = 30;

export interface PartnerCallback extends Endpoint {
  clientId: string;
  /** The property whose manager added it (only its events are sent), or null: every property granted to the client. */
  propertyId: string | null;
}

export interface CallbackDelivery {
  id: string;
  deliveryId: string;
  callbackId: string;
  url: string;
  eventId: string;
  eventType: string;
  attempt: number;
  httpStatus: number | null;
  durationMs: number;
  errorClass: string | null;
  errorMessage: string | null;
  startedAt: Date;
  finishedAt: Date;
  deliveryStatus: string;
}

type CallbackRow = EndpointRow & { client_id: string; property_id: string | null };
const columns = `${endpointColumns}, client_id, property_id`;
const toCallback = (r: CallbackRow): PartnerCallback => ({
  ...toEndpoint(r),
  clientId: r.client_id,
  propertyId: r.property_id,
});

/**
 * Callback addresses of partner API clients: webhook addresses owned by a client, sent to by the hotel webhook
 * engine (same address rules, signatures, retries, history and auto-close). Only a property's manager (panel) or
 * an operator (ops CLI) adds one; the partner reads its own delivery history.
 */
export function createPartnerCallbacks(d: {
  pool: pg.Pool;
  transact: Transact;
  clock: Clock;
  box: SecretBox;
  resolver: Resolver;
  policy: AddressPolicy;
}) {
  return {
    /**
     * Adds an address for `clientId` (a partner client; with `propertyId`, one granted that property, else not
     * found as any other property's client). Returns it with its `whsec_` secret, shown only here.
     */
    async create(input: {
      clientId: string;
      propertyId: string | null;
      url: string;
      eventTypes: readonly string[];
      description?: string;
      createdBy: string | null;
      /** The handle of a keyed call: the address commits with its stored outcome. */
      keyed?: Keyed | undefined;
    }): Promise<{ callback: PartnerCallback; secret: string }> {
      const types = [...new Set(input.eventTypes.map((t) => t.trim()).filter((t) => t !== ""))];
      if (types.length === 0)
        throw invalidField(
          "eventTypes",
          `choose at least one of ${partnerCallbackEventTypes.join(", ")}`,
          "validation_failed",
        );
      for (const t of types)
        if (!isPartnerCallbackType(t))
          throw invalidField(
            "eventTypes",
            `"${t}" is not a partner event type (${partnerCallbackEventTypes.join(", ")})`,
            "validation_failed",
          );
      const description = (input.description ?? "").trim();
      if (description.length > 500) throw invalidField("description", "at most 500 characters", "validation_failed");
      try {
        await verifyTarget(input.url, d.policy, d.resolver);
      } catch (err) {
        if (err instanceof AddressRejected) throw invalidField("url", err.message, "validation_failed");
        throw err;
      }
      const client = await findClient(poolQueryable(d.pool), input.clientId);
      if (client === undefined || client.kind !== "partner")
        throw new AppError("not_found", "Partner client not found.");
      const url = new URL(input.url).toString();
      const secret = newSigningSecret();
      const now = d.clock.now();
      const id = newId(now.getTime());
      const row = await d.transact(async (tx) => {
        if (input.propertyId !== null) {
          const [grant] = await tx.query<{ ok: boolean }>(`select ${clientGrantedSql("$1", "$2::uuid")} as ok`, [
            input.clientId,
            input.propertyId,
          ]);
          if (grant?.ok !== true) throw new AppError("not_found", "Partner client not found.");
        }
        // Serializes creates of one client so two concurrent requests cannot make an eleventh address.
        await tx.query("select pg_advisory_xact_lock(hashtext('partner_callbacks'), hashtext($1))", [input.clientId]);
        const [count] = await tx.query<{ n: number }>(
          "select count(*)::int as n from webhook_endpoints where client_id = $1",
          [input.clientId],
        );
        if ((count?.n ?? 0) >= maxCallbacksPerClient)
          throw new AppError(
            "conflict",
            `A partner client can have at most ${maxCallbacksPerClient} callback addresses; revoke one first.`,
          );
        const [inserted] = await tx.query<CallbackRow>(
          `insert into webhook_endpoints (id, client_id, property_id, url, description, event_types, status, secret_sealed, created_by, created_at, updated_at,
             max_per_second, max_concurrency)
           values ($1, $2, $3, $4, $5, $6, 'open', $7, $8, $9, $9, $10, $11) returning ${columns}`,
          [
            id,
            input.clientId,
            input.propertyId,
            url,
            description,
            types,
            d.box.seal(secret, id),
            input.createdBy,
            now,
            defaultMaxPerSecond,
            defaultMaxConcurrency,
          ],
        );
        return inserted!;
      }, input.keyed);
      return { callback: toCallback(row), secret };
    },

    /** The client's addresses a property's manager sees: those added for that property. */
    async listOfProperty(propertyId: string, clientId: string | undefined): Promise<PartnerCallback[]> {
      const { rows } = await d.pool.query<CallbackRow>(
        `select ${columns} from webhook_endpoints where property_id = $1 and client_id is not null
           and ($2::text is null or client_id = $2) order by created_at, id`,
        [propertyId, clientId ?? null],
      );
      return rows.map(toCallback);
    },

    /** Every address of the client (operators, and the partner's own view). */
    async listOfClient(clientId: string): Promise<PartnerCallback[]> {
      const { rows } = await d.pool.query<CallbackRow>(
        `select ${columns} from webhook_endpoints where client_id = $1 order by created_at, id`,
        [clientId],
      );
      return rows.map(toCallback);
    },

    /**
     * Revokes an address with its deliveries and history: one added for `scope.propertyId` (the panel), or any of
     * `scope.clientId` (an operator). Another property's or client's address is not found.
     */
    async revoke(scope: { propertyId: string } | { clientId: string }, id: string): Promise<void> {
      if (!isUuid(id)) throw new AppError("not_found", "Callback address not found.");
      const { rowCount } =
        "propertyId" in scope
          ? await d.pool.query(
              "delete from webhook_endpoints where id = $1 and property_id = $2 and client_id is not null",
              [id, scope.propertyId],
            )
          : await d.pool.query("delete from webhook_endpoints where id = $1 and client_id = $2", [id, scope.clientId]);
      if (rowCount === 0) throw new AppError("not_found", "Callback address not found.");
    },

    /**
     * The client's delivery attempts of the last 30 days over all its addresses, newest first, keyset-paged by
     * (started_at, id) with an opaque cursor; optionally of one event type.
     */
    async history(
      clientId: string,
      page: { cursor: string; limit: number; eventType: string },
    ): Promise<{ deliveries: CallbackDelivery[]; nextCursor: string }> {
      const limit = page.limit === 0 ? 50 : page.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > maxCallbackHistoryPage)
        throw invalidField("limit", `must be from 1 to ${maxCallbackHistoryPage}`);
      if (page.eventType !== "" && !isPartnerCallbackType(page.eventType) && page.eventType !== "webhook.test")
        throw invalidField("eventType", `"${page.eventType}" is not a partner event type`);
      const after = page.cursor === "" ? undefined : decodeHistoryCursor(page.cursor);
      const since = new Date(d.clock.now().getTime() - historyDays * 86_400_000);
      const { rows } = await d.pool.query<{
        id: string;
        delivery_id: string;
        endpoint_id: string;
        url: string;
        event_id: string;
        event_type: string;
        attempt: number;
        http_status: number | null;
        duration_ms: number;
        error_class: string | null;
        error_message: string | null;
        started_at: Date;
        finished_at: Date;
        delivery_status: string;
      }>(
        `select a.id, a.delivery_id, a.endpoint_id, ep.url, a.event_id, a.event_type, a.attempt, a.http_status, a.duration_ms,
                a.error_class, a.error_message, a.started_at, a.finished_at, dl.status as delivery_status
           from webhook_endpoints ep
           join webhook_attempts a on a.endpoint_id = ep.id and a.started_at >= $2
             and ($4::timestamptz is null or (a.started_at, a.id) < ($4::timestamptz, $5::uuid))
             and ($6::text is null or a.event_type = $6)
           join webhook_deliveries dl on dl.id = a.delivery_id
          where ep.client_id = $1
          order by a.started_at desc, a.id desc limit $3`,
        [
          clientId,
          since,
          limit + 1,
          after?.startedAt ?? null,
          after?.id ?? null,
          page.eventType === "" ? null : page.eventType,
        ],
      );
      const list = rows.slice(0, limit);
      const last = list.at(-1);
      return {
        deliveries: list.map((r) => ({
          id: r.id,
          deliveryId: r.delivery_id,
          callbackId: r.endpoint_id,
          url: r.url,
          eventId: r.event_id,
          eventType: r.event_type,
          attempt: r.attempt,
          httpStatus: r.http_status,
          durationMs: r.duration_ms,
          errorClass: r.error_class,
          errorMessage: r.error_message,
          startedAt: r.started_at,
          finishedAt: r.finished_at,
          deliveryStatus: r.delivery_status.toUpperCase(),
        })),
        nextCursor:
          rows.length > limit && last !== undefined
            ? Buffer.from(`${last.started_at.toISOString()}|${last.id}`).toString("base64url")
            : "",
      };
    },

    /**
     * The partner clients with an OPEN address subscribed to `type` that covers `propertyId` (and are granted it),
     * with their provider codes: who an ARI push of the property is built for.
     */
    async listeners(type: string, propertyIds: readonly string[]): Promise<Map<string, string[]>> {
      if (propertyIds.length === 0) return new Map();
      const { rows } = await d.pool.query<{ property_id: string; client_id: string }>(
        `select distinct p.id as property_id, ep.client_id
           from unnest($2::uuid[]) as p(id)
           join webhook_endpoints ep on ep.client_id is not null and ep.status = 'open' and $1 = any(ep.event_types)
             and (ep.property_id is null or ep.property_id = p.id)
          where ${clientGrantedSql("ep.client_id", "p.id")}`,
        [type, propertyIds],
      );
      const out = new Map<string, string[]>();
      for (const r of rows) {
        const list = out.get(r.property_id);
        if (list === undefined) out.set(r.property_id, [r.client_id]);
        else list.push(r.client_id);
      }
      return out;
    },
  };
}

function decodeHistoryCursor(cursor: string): { startedAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const startedAt = new Date(at ?? "");
  if (id === undefined || !isUuid(id) || Number.isNaN(startedAt.getTime()))
    throw invalidField("cursor", "is not a cursor returned by this API");
  return { startedAt, id };
}

export type PartnerCallbacks = ReturnType<typeof createPartnerCallbacks>;
