import { createHash } from "node:crypto";
import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import type { RowWriter } from "../../jobs/boss.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { parseDate } from "../../lib/dates.ts";
import { adapterFor } from "./adapters.ts";
import {
  messageRow,
  findPartnerMessage,
  propertiesInReach,
  type StoredPartnerMessage,
} from "./connectivity.repository.ts";
import type { Principal, PropertyRef } from "../auth/index.ts";
import { poolQueryable, type Queryable } from "../../db/queryable.ts";
import { changeFeed, changeFeedHead } from "../reservations/index.ts";
import { CONNECTIVITY_RELEASE } from "../status/index.ts";
import { mappingsOf, partnerTerms, ratePlansOf, roomTypesOf } from "./reads.repository.ts";
import { availabilityHead, readAvailability } from "../inventory/index.ts";
import type { AnswerCache } from "../../lib/answer-cache.ts";
import type { Keyed } from "../../db/held-transaction.ts";

export interface ConnectivityDeps {
  pool: pg.Pool;
  /** Writes a partner_messages row (messageColumns) with its processing job, both committed together. */
  messages: RowWriter;
  clock: Clock;
  /**
   * Where availability is read: the streaming replica while it is within REPLICA_MAX_LAG_MS of the primary, else
   * the primary (src/db/replica.ts). The feed is always read from the primary (see reservationsFeed).
   */
  replicaReads?: Queryable;
  /** Finished availability answers (see availability). */
  answers: AnswerCache;
}

type ClientPrincipal = Extract<Principal, { kind: "partner" | "internal" }>;

export function client(principal: Principal | undefined): ClientPrincipal {
  if (principal === undefined || principal.kind === "staff")
    throw new AppError("forbidden", "The connectivity API is for partner and internal clients.");
  return principal;
}

const DAY_MS = 86_400_000;
const CAPABILITIES: Record<string, string> = {
  "availability.read": "availability",
  "reservations.read": "reservations.feed",
  "mappings.read": "mappings",
  "reservations.write": "reservation-events",
  "ari.read": "ari",
  "ari.write": "ari-write",
  "allotment.write": "allotment",
};
/** Capabilities that write: before approval (environment "test") only sandbox properties offer them. */
const WRITES = new Set(["reservation-events", "ari-write", "allotment"]);

/** The feed cursor is opaque to clients: a versioned, base64url change sequence. */
export function encodeCursor(seq: bigint): string {
  return Buffer.from(`v1:${seq}`).toString("base64url");
}

/**
 * The next cursor of a feed page: after its last item, or (nothing returned) the later of where the client was
 * and the committed head of the sequence, so a cursor never moves backwards and an empty first page does not
 * send the next poll back to the start.
 */
export function nextCursorOf(after: bigint, lastSeq: string | undefined, head: bigint): string {
  if (lastSeq !== undefined) return encodeCursor(BigInt(lastSeq));
  return encodeCursor(head > after ? head : after);
}

export function decodeCursor(cursor: string): bigint {
  const m = /^v1:(\d{1,19})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (m === null) throw invalidField("cursor", "is not a cursor returned by this API");
  return BigInt(m[1]!);
}

export function createConnectivityService(deps: ConnectivityDeps) {
  // Availability may lag the primary by the replica bound: a partner polls it and the ARI changes feed tells what
  // changed. Its answer key holds the day rows' sequence read from the same place, so a cached answer is never
  // older than what that place holds.
  const reads = deps.replicaReads ?? poolQueryable(deps.pool);
  return {
    async capabilities(principal: Principal | undefined) {
      const caller = client(principal);
      const properties = await propertiesInReach(deps.pool, caller);
      const capabilities = [...caller.scopes]
        .map((s) => CAPABILITIES[s])
        .filter((c): c is string => c !== undefined)
        .sort();
      return {
        clientId: caller.clientId,
        provider: caller.provider,
        environment: caller.environment,
        apiRelease: CONNECTIVITY_RELEASE,
        scopes: [...caller.scopes].sort(),
        properties: properties.map((p) => ({
          code: p.code,
          name: p.name,
          capabilities:
            caller.environment === "live" || p.sandbox ? capabilities : capabilities.filter((c) => !WRITES.has(c)),
        })),
      };
    },

    /**
     * Availability over [from, to) in our room type codes with the caller's provider codes beside them. The answer
     * is cached (deps.answers) under everything it reads: the property, the caller's provider and its mappings, the
     * query, the room types and the ARI sequence of the day rows, read in one statement per request
     * (availabilityHead). A write that changes the answer commits a new sequence or a new room type or mapping, so
     * the next read misses: a cached answer is never stale, whichever process served the write.
     */
    async availability(
      principal: Principal | undefined,
      property: PropertyRef,
      from: string,
      to: string,
      roomTypeFilter: string[],
    ) {
      const caller = client(principal);
      parseDate("from", from);
      parseDate("to", to);
      const days = (Date.parse(to) - Date.parse(from)) / DAY_MS;
      if (days < 1) throw invalidField("to", "must be after from (to is exclusive)");
      if (days > 366) throw invalidField("to", "the range is at most 366 days");
      const [head, mapped] = await Promise.all([
        availabilityHead(reads, property.id),
        mappingsOf(deps.pool, property.id, caller.provider),
      ]);
      const wanted = new Set(roomTypeFilter);
      const selected =
        wanted.size === 0
          ? head.roomTypes
          : head.roomTypes.filter((rt) => wanted.has(rt.code) || wanted.has(mapped.get(rt.id) ?? ""));
      const key = createHash("sha256")
        .update(
          JSON.stringify([
            "availability",
            property.id,
            property.code,
            caller.provider,
            from,
            to,
            head.seq,
            selected.map((rt) => [rt.id, rt.code, rt.room_count, mapped.get(rt.id) ?? null]),
          ]),
        )
        .digest("base64");
      return deps.answers.get(
        key,
        async () => {
          // a filter that matches nothing reads nothing (an empty code list would mean every room type)
          const rows =
            selected.length === 0
              ? []
              : await readAvailability(
                  reads,
                  property.id,
                  from,
                  to,
                  selected.map((rt) => rt.code),
                );
          return {
            propertyCode: property.code,
            from,
            to,
            toExclusive: true,
            roomTypes: rows.map((rt) => {
              const externalCode = mapped.get(rt.roomTypeId);
              return { code: rt.code, days: rt.days, ...(externalCode !== undefined ? { externalCode } : {}) };
            }),
          };
        },
        // about 100 bytes of heap per day object, 200 per room type
        (a) => a.roomTypes.reduce((n, rt) => n + 200 + 100 * rt.days.length, 500),
      );
    },

    async reservationsFeed(
      principal: Principal | undefined,
      property: PropertyRef,
      opts: { cursor: string; updatedSince: Date | undefined; limit: number },
    ) {
      const caller = client(principal);
      const limit = opts.limit === 0 ? 100 : opts.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw invalidField("limit", "must be from 1 to 500");
      const after = opts.cursor === "" ? 0n : decodeCursor(opts.cursor);
      // From the primary, never the replica: the cursor promises that no change is skipped, and a replica could
      // hand out a head (an empty page's next cursor) beyond changes it has not replayed yet.
      const q = poolQueryable(deps.pool);
      // The head is read BEFORE the page: every change up to it is committed, so an empty page may jump there.
      const head = await changeFeedHead(q, property.id);
      const [rows, mapped] = await Promise.all([
        changeFeed(q, property.id, after, opts.cursor === "" ? opts.updatedSince : undefined, limit + 1),
        mappingsOf(deps.pool, property.id, caller.provider),
      ]);
      const codes = new Map((await roomTypesOf(deps.pool, property.id)).map((rt) => [rt.code, mapped.get(rt.id)]));
      const page = rows
        .slice(0, limit)
        .map((r) => ({ ...r, roomTypeCodes: r.roomTypes.map((code) => ({ code, externalCode: codes.get(code) })) }));
      return {
        data: page,
        nextCursor: nextCursorOf(after, page.at(-1)?.changeSeq, head),
        hasMore: rows.length > limit,
      };
    },

    async mappings(principal: Principal | undefined, property: PropertyRef) {
      const caller = client(principal);
      const [mapped, roomTypes, ratePlans] = await Promise.all([
        mappingsOf(deps.pool, property.id, caller.provider),
        roomTypesOf(deps.pool, property.id),
        ratePlansOf(deps.pool, property.id),
      ]);
      return {
        property: { code: property.code, externalCode: mapped.get(property.id) },
        roomTypes: roomTypes.map((rt) => ({ code: rt.code, name: rt.name, externalCode: mapped.get(rt.id) })),
        ratePlans: ratePlans.map((rp) => ({
          code: rp.code,
          name: rp.name,
          externalCode: mapped.get(rp.id),
          roomTypeCodes: rp.room_type_codes,
          ...partnerTerms(rp),
        })),
      };
    },

    /**
     * Validates the event with the provider's adapter and stores it in the common queue with its processing job,
     * committed together (one statement, shared with events accepted at the same moment). Clients not yet approved
     * for live (environment "test") may write to sandbox properties only.
     */
    async queueReservationEvent(
      principal: Principal | undefined,
      property: PropertyRef,
      payload: Record<string, unknown>,
      keyed?: Keyed,
    ): Promise<{ eventId: string; status: "QUEUED" }> {
      const caller = client(principal);
      if (caller.environment !== "live" && !property.sandbox) {
        throw new AppError(
          "partner_not_approved",
          "Live writes need partner approval; until then reservation events are accepted for the sandbox property only.",
        );
      }
      const event = adapterFor(caller.provider).parse(payload);
      const id = newId();
      await deps.messages.write(
        messageRow({
          id,
          propertyId: property.id,
          clientId: caller.clientId,
          provider: caller.provider,
          event,
          now: deps.clock.now(),
        }),
        {
          eventId: id,
          propertyId: property.id,
          externalReference: event.externalReference,
        },
        keyed,
      );
      return { eventId: id, status: "QUEUED" };
    },

    async getReservationEvent(
      principal: Principal | undefined,
      property: PropertyRef,
      eventId: string,
    ): Promise<StoredPartnerMessage> {
      const caller = client(principal);
      const found = isUuid(eventId)
        ? await findPartnerMessage(deps.pool, property.id, caller.clientId, eventId)
        : undefined;
      if (found === undefined) throw new AppError("not_found", `Reservation event ${eventId} was not found.`);
      return found;
    },
  };
}

export type ConnectivityService = ReturnType<typeof createConnectivityService>;
