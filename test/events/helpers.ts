import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { EventService, type DomainEvent, type StreamEventsResponse } from "../../gen/hotelops/event/v1/event_pb.js";
import type { App } from "../../src/app.ts";
import { recordEvents, type EventType } from "../../src/modules/events/index.ts";
import { bearer } from "../helpers/auth.ts";

/** An open StreamEvents call read message by message (keep-alives are kept apart). */
export interface OpenStream {
  /** The next `n` events; throws the stream's error, or after `timeoutMs` without them. */
  events(n: number, timeoutMs?: number): Promise<DomainEvent[]>;
  /** Whatever comes within `ms` (nothing expected: the caller checks). */
  quiet(ms: number): Promise<DomainEvent[]>;
  /** The next keep-alive's cursor (events before it are collected in `skipped`). */
  keepAlive(timeoutMs?: number): Promise<string>;
  skipped: DomainEvent[];
  close(): void;
}

export function openStream(
  transport: Transport,
  token: string,
  req: { propertyCode?: string; cursor?: string; fromBeginning?: boolean; eventTypes?: string[] },
): OpenStream {
  const abort = new AbortController();
  const client = createClient(EventService, transport);
  const call = client.streamEvents(req, { headers: bearer(token), signal: abort.signal });
  const it: AsyncIterator<StreamEventsResponse> = call[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<StreamEventsResponse>> | undefined;
  const nextWithin = async (ms: number): Promise<IteratorResult<StreamEventsResponse> | "timeout"> => {
    pending ??= it.next();
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      pending,
      new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms))),
    ]);
    clearTimeout(timer);
    if (r !== "timeout") pending = undefined;
    return r;
  };
  const s: OpenStream = {
    skipped: [],
    async events(n, timeoutMs = 10_000) {
      const out: DomainEvent[] = [];
      const end = Date.now() + timeoutMs;
      while (out.length < n) {
        const r = await nextWithin(Math.max(1, end - Date.now()));
        if (r === "timeout") throw new Error(`${out.length} of ${n} events within ${timeoutMs} ms`);
        if (r.done === true) throw new Error(`the stream ended after ${out.length} of ${n} events`);
        if (r.value.kind.case === "event") out.push(r.value.kind.value);
      }
      return out;
    },
    async quiet(ms) {
      const out: DomainEvent[] = [];
      const end = Date.now() + ms;
      for (;;) {
        const left = end - Date.now();
        if (left <= 0) return out;
        const r = await nextWithin(left);
        if (r === "timeout" || r.done === true) return out;
        if (r.value.kind.case === "event") out.push(r.value.kind.value);
      }
    },
    async keepAlive(timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await nextWithin(Math.max(1, end - Date.now()));
        if (r === "timeout" || r.done === true) throw new Error("no keep-alive");
        if (r.value.kind.case === "keepAlive") return r.value.kind.value.cursor;
        if (r.value.kind.case === "event") s.skipped.push(r.value.kind.value);
      }
    },
    close() {
      abort.abort();
      pending?.catch(() => undefined);
    },
  };
  return s;
}

/** The error a promise rejects with, as a ConnectError with our code (x-error-code). */
export async function streamFailure(work: Promise<unknown>): Promise<{ code: number; appCode: string | null }> {
  try {
    await work;
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, appCode: e.metadata.get("x-error-code") };
  }
  throw new Error("expected the stream to fail");
}

/**
 * Records `n` events of the property in one transaction (the webhook's payload shape does not matter here); returns
 * their ids in stream order (one transaction's events come in id order).
 */
export async function record(
  app: Pick<App, "deps">,
  propertyId: string,
  n: number,
  type: EventType = "reservation.created",
): Promise<string[]> {
  const ids = await app.deps.transact((tx) =>
    recordEvents(
      tx,
      Array.from({ length: n }, (_, i) => ({ propertyId, type, occurredAt: new Date(), data: { seq: i } })),
    ),
  );
  return ids.sort();
}
