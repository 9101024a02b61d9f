import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { startOtlpReceiver } from "../helpers/otlp-receiver.ts";

// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the OpenTelemetry specification defines them. Its own file:
// the tracer provider is process-wide.
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let app: App;
let baseUrl: string;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  app = await createApp(
    loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: await freshDatabaseUrl(),
      DATA_DIR: mkdtempSync(join(tmpdir(), "sampling-data-")),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0",
    }),
    { logger: pino({ level: "silent" }) },
  );
  baseUrl = `http://127.0.0.1:${app.port}`;
});
afterAll(async () => {
  await app?.close();
  await otlp?.close();
});

describe("trace sampling", () => {
  it("parentbased_traceidratio 0 records no new trace but follows a sampled traceparent; a bad sampler stops start-up", async () => {
    for (let i = 0; i < 5; i++) expect((await fetch(`${baseUrl}/api/v1/status`)).status).toBe(200);
    const trace = randomBytes(16).toString("hex");
    const res = await fetch(`${baseUrl}/api/v1/status`, {
      headers: { traceparent: `00-${trace}-${randomBytes(8).toString("hex")}-01` },
    });
    expect(res.status).toBe(200);
    // the sampled caller's trace arrives; by then the five unsampled requests' spans would have too (one batch)
    await otlp.until((all) => all.some((s) => s.traceId === trace));
    expect(new Set(otlp.spans.map((s) => s.traceId))).toEqual(new Set([trace]));

    for (const [env, message] of [
      [{ OTEL_TRACES_SAMPLER: "jaeger_remote" }, /OTEL_TRACES_SAMPLER must be one of/],
      [{ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" }, /from 0 to 1/],
      [{ OTEL_TRACES_SAMPLER: "always_on", OTEL_TRACES_SAMPLER_ARG: "0.5" }, /read only by the traceidratio/],
    ] as const) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    }
    expect(loadConfig({}).tracesSampler).toEqual({ name: "parentbased_always_on", ratio: 1 });
  });
});
