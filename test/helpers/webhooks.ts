import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { createApp, type App } from "../../src/app.ts";
import type { Clock } from "../../src/lib/clock.ts";
import {
  createWebhookParts,
  systemResolver,
  type Resolver,
  type WebhookOptions,
} from "../../src/modules/webhooks/index.ts";
import { createPartnerRoomTypeCodes, type AriPushOptions } from "../../src/modules/connectivity/index.ts";
import { freshDatabaseUrl } from "./db.ts";
import { testLogger } from "./logs.ts";
import type { TestCa } from "./https-receiver.ts";

export { createTestCa, startReceiver, type TestCa, type Received, type Receiver } from "./https-receiver.ts";

/** DNS for tests: names in `answers` resolve as told (changeable mid-test), everything else through the system. */
export function testResolver(
  answers: Map<string, string[]> = new Map([["receiver.test", ["127.0.0.1"]]]),
): Resolver & { answers: Map<string, string[]>; calls: string[] } {
  const calls: string[] = [];
  const resolver = (async (host: string) => {
    calls.push(host);
    const a = answers.get(host);
    if (a === undefined) return systemResolver(host);
    return a.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }));
  }) as Resolver & { answers: Map<string, string[]>; calls: string[] };
  resolver.answers = answers;
  resolver.calls = calls;
  return resolver;
}

export const testSecretKey = "7f".repeat(32);

/**
 * The whole service with loopback targets allowed and the test CA trusted, plus a second set of webhook
 * parts on the same deps (same options) so a test can run due work by hand after moving the clock.
 */
export async function startWebhookApp(opts: {
  ca: TestCa;
  clock: Clock;
  webhooks: WebhookOptions;
  env?: Record<string, string>;
  ariPush?: AriPushOptions;
}) {
  const dataDir = mkdtempSync(join(tmpdir(), "webhook-data-"));
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_URL: await freshDatabaseUrl(),
    SHUTDOWN_GRACE_MS: "2000",
    DATA_DIR: dataDir,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: opts.ca.caFile,
    WEBHOOK_SECRET_KEY: testSecretKey,
    ...opts.env,
  });
  const app: App = await createApp(config, {
    logger: testLogger(),
    clock: opts.clock,
    webhooks: opts.webhooks,
    ...(opts.ariPush !== undefined ? { ariPush: opts.ariPush } : {}),
  });
  const parts = createWebhookParts(app.deps, createPartnerRoomTypeCodes(app.db.pool), opts.webhooks);
  return Object.assign(app, { baseUrl: `http://127.0.0.1:${app.port}`, parts, dataDir });
}
export type WebhookApp = Awaited<ReturnType<typeof startWebhookApp>>;
