import pg from "pg";
import type { Db } from "pg-boss";
import type { Logger } from "../lib/logger.ts";

type Listen = NonNullable<Db["listen"]>;

const HEARTBEAT_MS = 10_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * pg-boss's LISTEN capability (`Db.listen` of its public adapter interface) on one dedicated session: LISTEN
 * cannot be pooled (a pooled connection, and any PgBouncer in transaction mode, would lose the subscription), so
 * it connects to DATABASE_DIRECT_URL when there is one. A dropped session (failover, a killed proxy,
 * pg_terminate_backend, a silent network loss caught by the heartbeat) is logged, never thrown: the session
 * reconnects with capped exponential backoff (1 s, 2 s, ... 30 s), LISTENs again and calls `onReconnect` so
 * pg-boss fetches what was sent meanwhile. Until then workers still poll (RETRY_POLL_SECONDS in boss.ts).
 */
export function createListen(url: string, logger: Logger): Listen {
  return async (channel, onNotification, onReconnect) => {
    let closed = false;
    let client: pg.Client | undefined;
    let timer: NodeJS.Timeout | undefined;
    let attempt = 0;
    let established = false;

    const schedule = (ms: number, run: () => void): void => {
      clearTimeout(timer);
      timer = setTimeout(run, ms);
      timer.unref();
    };
    const reconnect = (): void => {
      if (closed) return;
      const backoff = Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.min(attempt++, 5));
      schedule(backoff, () => void connect().catch(reconnect));
    };
    const drop = (target: pg.Client, err: Error): void => {
      if (closed || client !== target) return;
      client = undefined;
      clearTimeout(timer);
      target.removeAllListeners();
      target.on("error", () => undefined);
      void target.end().catch(() => undefined);
      logger.warn({ err: err.message, channel }, "LISTEN session lost; reconnecting");
      if (established) reconnect();
    };
    const heartbeat = (target: pg.Client): void =>
      schedule(HEARTBEAT_MS, () => {
        const probe = target.query<{ listening: boolean }>(
          "select exists (select 1 from pg_listening_channels() c where c = $1) as listening",
          [channel],
        );
        const timeout = new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("LISTEN heartbeat timed out")), HEARTBEAT_TIMEOUT_MS).unref(),
        );
        Promise.race([probe, timeout]).then(
          (r) =>
            r.rows[0]?.listening === true ? heartbeat(target) : drop(target, new Error("LISTEN subscription lost")),
          (err: unknown) => drop(target, err instanceof Error ? err : new Error(String(err))),
        );
      });
    const connect = async (): Promise<void> => {
      if (closed) return;
      const next = new pg.Client({
        connectionString: url,
        application_name: "hotelops-listen",
        keepAlive: true,
        keepAliveInitialDelayMillis: HEARTBEAT_MS,
        connectionTimeoutMillis: 5_000,
      });
      next.on("error", (err) => drop(next, err));
      next.on("end", () => drop(next, new Error("LISTEN session ended")));
      next.on("notification", (msg) => {
        if (msg.payload !== undefined) onNotification(msg.payload);
      });
      client = next;
      try {
        await next.connect();
        await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      } catch (err) {
        if (client === next) client = undefined;
        next.removeAllListeners();
        next.on("error", () => undefined);
        await next.end().catch(() => undefined);
        throw err;
      }
      if (attempt > 0) logger.info({ channel }, "LISTEN session back");
      attempt = 0;
      established = true;
      heartbeat(next);
      onReconnect();
    };
    // A first failure is thrown: pg-boss then works by polling alone.
    await connect();
    return {
      async close() {
        closed = true;
        clearTimeout(timer);
        const c = client;
        client = undefined;
        if (c !== undefined) {
          c.removeAllListeners();
          c.on("error", () => undefined);
          await c.end().catch(() => undefined);
        }
      },
    };
  };
}
