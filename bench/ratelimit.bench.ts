// The cost of the PostgreSQL rate limiter on the cheapest endpoint: GET /api/v1/status through the REST gateway
// without the limiter, with it on one hot bucket (every request from one IP: all upserts contend for one row),
// and with a new bucket per request (an insert each time). Status is rate_limit_class "none" in the service;
// here the limiter is forced to count it so the difference is the limiter alone.
import { type Interceptor } from "@connectrpc/connect";
import { pino } from "pino";
import { openDatabase, type Database } from "../src/db/index.ts";
import { createGateway } from "../src/gateway/index.ts";
import { createRecordingRouter } from "../src/server/calls.ts";
import { systemClock } from "../src/lib/clock.ts";
import { principalKey } from "../src/modules/auth/principal.ts";
import { createRateLimitInterceptor, createRateLimitRepository } from "../src/modules/platform/index.ts";
import { createStatusModule } from "../src/modules/status/index.ts";
import type { Deps } from "../src/modules/module.ts";
import { createDispatcher } from "../src/server/dispatch.ts";
import { createCallInterceptor } from "../src/server/interceptors.ts";
import { listen, type Listener } from "../src/server/listen.ts";
import { benchDatabase, load, rssMiB, table } from "./harness.ts";

const logger = pino({ level: "silent" });

/** `Authorization: Bench <session>` becomes a staff principal, so each request can pick its own bucket. */
const benchPrincipal: Interceptor = (next) => async (req) => {
  const session = /^Bench (.+)$/.exec(req.header.get("authorization") ?? "")?.[1];
  if (session !== undefined) {
    req.contextValues.set(principalKey, {
      kind: "staff",
      userId: "bench",
      sessionId: session,
      activePropertyId: "p",
      propertyIds: ["p"],
      permissions: new Set<string>(),
    });
  }
  return next(req);
};

async function serve(db: Database, limited: boolean): Promise<Listener> {
  const limiter = createRateLimitInterceptor({
    repository: createRateLimitRepository(db.pool),
    clock: systemClock,
    limits: { staffPerMinute: 1e9, anonPerMinute: 1e9, authPerMinute: 1e9 },
    logger,
    classOf: () => "",
  });
  const router = createRecordingRouter({
    interceptors: [createCallInterceptor(logger), benchPrincipal, ...(limited ? [limiter] : [])],
  });
  createStatusModule({ db } as Deps).registerRpc?.(router);
  const gateway = createGateway({ ...router.direct, maxBodyBytes: 1024 * 1024 });
  return listen(createDispatcher({ handlers: router.handlers, gateway, ready: async () => true, logger }), {
    port: 0,
    host: "127.0.0.1",
  });
}

export async function benchRateLimit(): Promise<void> {
  const database = await benchDatabase();
  const db = await openDatabase({ databaseUrl: database.url, dataDir: database.dir }, logger);
  const plain = await serve(db, false);
  const limited = await serve(db, true);
  try {
    const baseline = await load("status, no limiter (baseline)", {
      url: `http://127.0.0.1:${plain.port}/api/v1/status`,
    });
    const hot = await load("status, limiter, one hot bucket", {
      url: `http://127.0.0.1:${limited.port}/api/v1/status`,
    });
    const spread = await load("status, limiter, new bucket per request", {
      url: `http://127.0.0.1:${limited.port}/api/v1/status`,
      headers: { authorization: "Bench [<id>]" },
      idReplacement: true,
    });
    table([baseline, hot, spread], baseline);
    const rows = await db.pool.query<{ n: number }>("select count(*)::int as n from rate_limits");
    console.log(
      `limiter/no-limiter throughput: hot bucket ${(hot.rps / baseline.rps).toFixed(2)}, spread ${(spread.rps / baseline.rps).toFixed(2)}; rate_limits rows ${rows.rows[0]?.n}; RSS ${rssMiB()} MiB`,
    );
  } finally {
    await plain.close(100);
    await limited.close(100);
    await db.close();
    await database.stop();
  }
}
