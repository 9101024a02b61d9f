import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trace } from "@opentelemetry/api";
import { pino } from "pino";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { smallHotel } from "../helpers/small-hotel.ts";
import { createTestCa, startReceiver, testSecretKey, type Receiver, type TestCa } from "../helpers/webhooks.ts";

let ca: TestCa;
let receiver: Receiver;
let app: TestApp;

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  app = await startTestApp({
    env: {
      DATA_DIR: mkdtempSync(join(tmpdir(), "metrics-data-")),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      WEBHOOK_EXTRA_CA_FILE: ca.caFile,
      WEBHOOK_SECRET_KEY: testSecretKey,
    },
  });
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

/** `name{labels} value` lines of the exposition, as [series, value]. */
async function scrape(url: string, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  const series = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

const uuidLike = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe("GET /metrics (Prometheus text format)", () => {
  it("counts RPCs by face, RPC and code with latency histograms; jobs, webhooks, pool, event loop and memory; no ids in labels", async () => {
    const hotel = await smallHotel(app, app.baseUrl);
    await hotel.addWebhook(receiver.url("/hook", "localhost"));
    expect((await hotel.createReservation(hotel.stay())).status).toBe(201);
    await receiver.waitFor(1, 10_000);
    const faces: [string, Transport][] = [
      ["connect", createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
      ["grpc", createGrpcTransport({ baseUrl: app.baseUrl })],
      ["grpc-web", createGrpcWebTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
    ];
    for (const [, transport] of faces) {
      await createClient(StatusService, transport).getStatus({});
      // no session: unauthorized, counted under its code
      const err = await createClient(MobileService, transport)
        .getDashboard({})
        .catch((e: unknown) => ConnectError.from(e));
      expect((err as ConnectError).code).toBe(Code.Unauthenticated);
    }
    expect((await fetch(`${app.baseUrl}/api/v1/status`)).status).toBe(200);
    // the first attempt's figures are recorded once its batch is settled, just after the receiver answered
    await new Promise((r) => setTimeout(r, 300));

    const m = await scrape(`${app.baseUrl}/metrics`);
    const status = "hotelops.status.v1.StatusService/GetStatus";
    for (const face of ["rest", "connect", "grpc", "grpc-web"])
      expect(m.get(`hotelops_rpc_requests_total{face="${face}",rpc="${status}",code="ok"}`)).toBe(1);
    for (const face of ["connect", "grpc", "grpc-web"])
      expect(
        m.get(
          `hotelops_rpc_requests_total{face="${face}",rpc="hotelops.mobile.v1.MobileService/GetDashboard",code="unauthorized"}`,
        ),
      ).toBe(1);
    expect(
      m.get(
        `hotelops_rpc_requests_total{face="rest",rpc="hotelops.mobile.v1.MobileService/CreateMobileReservation",code="ok"}`,
      ),
    ).toBe(1);
    expect(m.get(`hotelops_rpc_duration_seconds_count{face="grpc",rpc="${status}",code="ok"}`)).toBe(1);
    expect(m.get(`hotelops_rpc_duration_seconds_bucket{le="+Inf",face="grpc",rpc="${status}",code="ok"}`)).toBe(1);
    expect(m.get(`hotelops_webhook_attempts_total{outcome="succeeded",attempt="1"}`)).toBe(1);
    expect(m.get("hotelops_webhook_first_attempt_delay_seconds_count")).toBe(1);
    expect(m.get(`hotelops_webhook_endpoints{state="open"}`)).toBe(1);
    expect(m.has(`hotelops_queue_jobs_waiting{queue="events.fanout"}`)).toBe(true);
    expect(m.has(`hotelops_queue_oldest_job_age_seconds{queue="webhooks.deliver"}`)).toBe(true);
    expect(m.has(`hotelops_queue_jobs_failed{queue="events.fanout"}`)).toBe(true);
    expect(m.get(`hotelops_db_pool_connections_in_use{pool="main"}`)).toBeGreaterThanOrEqual(0);
    expect(m.get(`hotelops_db_pool_waiting{pool="main"}`)).toBe(0);
    expect(m.get("nodejs_eventloop_lag_p99_seconds")).toBeGreaterThan(0);
    expect(m.get("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(m.get("nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    // no observer on every garbage collection: it cost a fifth of a small call's throughput
    expect([...m.keys()].filter((series) => series.startsWith("nodejs_gc_"))).toEqual([]);
    for (const series of m.keys()) expect(series).not.toMatch(uuidLike);
  });

  it("a failed job is counted under its queue", async () => {
    await app.boss.registerWorker(
      "test.always-fails",
      async () => {
        throw new Error("boom");
      },
      { queue: { retryLimit: 0 } },
    );
    await app.boss.pgboss.send("test.always-fails", {});
    const deadline = Date.now() + 10_000;
    for (;;) {
      const m = await scrape(`${app.baseUrl}/metrics`);
      if (m.get(`hotelops_job_failures_total{queue="test.always-fails"}`) === 1) break;
      if (Date.now() > deadline) throw new Error("failure not counted");
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it("with METRICS_TOKEN only a matching bearer token reads it; METRICS=off serves nothing", async () => {
    const guarded = await startTestApp({ env: { METRICS_TOKEN: "s3cret-scrape" } });
    try {
      expect((await fetch(`${guarded.baseUrl}/metrics`)).status).toBe(401);
      expect((await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(
        401,
      );
      const m = await scrape(`${guarded.baseUrl}/metrics`, { authorization: "Bearer s3cret-scrape" });
      expect(m.get("process_resident_memory_bytes")).toBeGreaterThan(0);
    } finally {
      await guarded.close();
    }
    const off = await startTestApp({ env: { METRICS: "off" } });
    try {
      expect((await fetch(`${off.baseUrl}/metrics`)).status).toBe(404);
      expect(off.metrics).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it("METRICS_PORT serves them on a port of their own, also for ROLE=worker (which has no API port)", async () => {
    const config = loadConfig({
      ROLE: "worker",
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      LOG_LEVEL: "silent",
      DATABASE_URL: await freshDatabaseUrl(),
      SHUTDOWN_GRACE_MS: "1000",
    });
    const worker: App = await createApp(config, { logger: pino({ level: "silent" }) });
    try {
      expect(worker.port).toBeUndefined();
      const m = await scrape(`http://127.0.0.1:${worker.metricsPort}/metrics`);
      expect(m.has(`hotelops_queue_jobs_waiting{queue="webhooks.sweep"}`)).toBe(true);
      expect(m.get("process_resident_memory_bytes")).toBeGreaterThan(0);
    } finally {
      await worker.close();
    }
  });

  it("tracing is off without OTEL_EXPORTER_OTLP_ENDPOINT: no provider, the API's no-op tracer", () => {
    expect(app.tracing).toBeUndefined();
    expect(trace.getTracer("x").startSpan("y").spanContext().traceId).toBe("00000000000000000000000000000000");
  });
});
