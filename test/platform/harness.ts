import { type Interceptor } from "@connectrpc/connect";
import { pino } from "pino";
import { PlatformTestService } from "../gen/hotelops/platformtest/v1/platform_test_pb.js";
import { openDatabase, type Database } from "../../src/db/index.ts";
import { AppError, type ErrorCode } from "../../src/errors.ts";
import { createGateway } from "../../src/gateway/index.ts";
import { createRecordingRouter } from "../../src/server/calls.ts";
import { systemClock, type Clock } from "../../src/lib/clock.ts";
import { newId } from "../../src/lib/ids.ts";
import { principalKey, type Principal } from "../../src/modules/auth/principal.ts";
import {
  createPlatformInterceptors,
  type IdempotencyOptions,
  type RateLimits,
} from "../../src/modules/platform/index.ts";
import { createDispatcher } from "../../src/server/dispatch.ts";
import { createCallInterceptor } from "../../src/server/interceptors.ts";
import { listen } from "../../src/server/listen.ts";

export interface PlatformServer {
  base: string;
  port: number;
  db: Database;
  /** Executions of the write RPCs on this server. */
  executions(): number;
  close(): Promise<void>;
}

/**
 * Stands in for the auth module: `Authorization: Test staff:<userId>:<sessionId>[:<propertyId>]` or
 * `Authorization: Test client:<clientId>` becomes the call's Principal (the gateway forwards Authorization).
 */
const testPrincipal: Interceptor = (next) => async (req) => {
  const raw = /^Test (.+)$/.exec(req.header.get("authorization") ?? "")?.[1];
  if (raw !== undefined) {
    const [kind, id, session, property] = raw.split(":");
    const principal: Principal =
      kind === "staff"
        ? {
            kind: "staff",
            userId: id!,
            sessionId: session ?? "s",
            activePropertyId: property ?? "p1",
            propertyIds: [property ?? "p1"],
            permissions: new Set(),
          }
        : { kind: "partner", clientId: id!, provider: "test", environment: "test", propertyIds: [], scopes: new Set() };
    req.contextValues.set(principalKey, principal);
  }
  return next(req);
};

/**
 * The platform interceptors in front of the test service, composed like src/app.ts does (call interceptor,
 * auth, rate limit, idempotency; gateway and dispatcher on a real socket), on the given database. Two of these
 * on one database URL are two "processes" sharing PostgreSQL.
 */
export async function startPlatformServer(opts: {
  databaseUrl: string;
  clock?: Clock;
  limits?: Partial<RateLimits>;
  idempotency?: Partial<IdempotencyOptions>;
}): Promise<PlatformServer> {
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const clock = opts.clock ?? systemClock;
  const db = await openDatabase({ databaseUrl: opts.databaseUrl, dataDir: "/nonexistent" }, logger);
  const limits: RateLimits = {
    staffPerMinute: 100_000,
    anonPerMinute: 100_000,
    authPerMinute: 100_000,
    ...opts.limits,
  };
  const router = createRecordingRouter({
    interceptors: [
      createCallInterceptor(logger),
      testPrincipal,
      ...createPlatformInterceptors({
        pool: db.pool,
        clock,
        logger,
        limits,
        ...(opts.idempotency !== undefined ? { idempotency: opts.idempotency } : {}),
      }),
    ],
  });
  let executions = 0;
  const create = async (req: { name: string; failWith?: string; delayMs?: number }) => {
    executions++;
    const execution = executions;
    if (req.delayMs) await new Promise((r) => setTimeout(r, req.delayMs));
    if (req.failWith === "boom") throw new Error("boom");
    if (req.failWith)
      throw new AppError(req.failWith as ErrorCode, `failed with ${req.failWith}`, {
        details: [{ field: "name", reason: "test" }],
      });
    return { id: newId(), name: req.name, execution };
  };
  router.service(PlatformTestService, {
    createWidget: (req) => create(req),
    createOrder: (req) => create(req),
    getWidget: (req) => ({ id: req.id, name: "w", execution: executions }),
    login: () => ({ ok: true }),
    ping: () => ({}),
  });
  const gateway = createGateway({ ...router.direct, maxBodyBytes: 64 * 1024 });
  const listener = await listen(
    createDispatcher({ handlers: router.handlers, gateway, ready: async () => true, logger }),
    { port: 0, host: "127.0.0.1" },
  );
  return {
    base: `http://127.0.0.1:${listener.port}`,
    port: listener.port,
    db,
    executions: () => executions,
    async close() {
      await listener.close(500);
      await db.close();
    },
  };
}
