import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { randomBytes } from "node:crypto";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { startOtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.ts";
import { smallHotel } from "../helpers/small-hotel.ts";
import { createTestCa, startReceiver, testSecretKey, type Receiver, type TestCa } from "../helpers/webhooks.ts";

let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let ca: TestCa;
let receiver: Receiver;
let app: App;
let baseUrl: string;
const lines: Record<string, unknown>[] = [];

const traceId = () => randomBytes(16).toString("hex");
const spanId = () => randomBytes(8).toString("hex");

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  ca = createTestCa();
  receiver = await startReceiver(ca);
  const logs = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: await freshDatabaseUrl(),
    DATA_DIR: mkdtempSync(join(tmpdir(), "tracing-data-")),
    SHUTDOWN_GRACE_MS: "2000",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
    WEBHOOK_SECRET_KEY: testSecretKey,
    RATE_LIMIT_STAFF_PER_MINUTE: "100000",
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_SERVICE_NAME: "hotelops-test",
  });
  app = await createApp(config, { logger: createLogger("info", logs) });
  baseUrl = `http://127.0.0.1:${app.port}`;
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await otlp?.close();
});

const byTrace = (id: string) => (s: ReceivedSpan) => s.traceId === id;

describe("OpenTelemetry tracing (OTLP export to an in-process receiver)", () => {
  it("one REST reservation create yields one trace: the RPC, its statements, the fan-out job and the webhook delivery attempt", async () => {
    const hotel = await smallHotel(app, baseUrl);
    await hotel.addWebhook(receiver.url("/hook", "localhost"));
    const trace = traceId();
    const parent = spanId();
    const res = await hotel.createReservation(hotel.stay(), { traceparent: `00-${trace}-${parent}-01` });
    expect(res.status).toBe(201);
    const [delivery] = await receiver.waitFor(1, 10_000);
    expect(delivery!.headers["service-event-type"]).toBe("reservation.created");

    const spans = await otlp.until((all) => all.some((s) => s.traceId === trace && s.name === "webhook attempt"));
    const inTrace = spans.filter(byTrace(trace));
    const rpc = inTrace.find((s) => s.name === "hotelops.mobile.v1.MobileService/CreateMobileReservation");
    expect(rpc, inTrace.map((s) => s.name).join(", ")).toBeDefined();
    expect(rpc!.parentSpanId).toBe(parent);
    expect(rpc!.service).toBe("hotelops-test");
    expect(rpc!.attributes["hotelops.face"]).toBe("rest");
    // the RPC's own statements are its children
    expect(inTrace.some((s) => s.name.startsWith("pg ") && s.parentSpanId === rpc!.spanId)).toBe(true);
    // the job carried the context: its consumer span continues the trace, and the attempt is inside it
    // (the create records more than one event; pg-boss may fetch their jobs in one batch or in several)
    const jobs = inTrace.filter((s) => s.name === "job events.fanout").map((s) => s.spanId);
    expect(jobs.length).toBeGreaterThan(0);
    const attempt = inTrace.find((s) => s.name === "webhook attempt")!;
    expect(jobs).toContain(attempt.parentSpanId);
    expect(attempt.attributes["hotelops.webhook.attempt"]).toBe(1);
    expect(attempt.attributes["http.response.status_code"]).toBe(204);
    // statement spans carry the SQL text, never the guest's data (parameters are not recorded)
    expect(JSON.stringify(inTrace)).not.toContain("Ayse Yilmaz");
  });

  it("continues a caller's traceparent on Connect, gRPC and gRPC-Web too", async () => {
    const faces: [string, Transport][] = [
      ["connect", createConnectTransport({ baseUrl, httpVersion: "1.1" })],
      ["grpc", createGrpcTransport({ baseUrl })],
      ["grpc-web", createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })],
    ];
    for (const [face, transport] of faces) {
      const trace = traceId();
      const parent = spanId();
      await createClient(StatusService, transport).getStatus(
        {},
        { headers: { traceparent: `00-${trace}-${parent}-01` } },
      );
      const name = "hotelops.status.v1.StatusService/GetStatus";
      const span = (await otlp.until((all) => all.some((s) => s.traceId === trace && s.name === name))).find(
        (s) => s.traceId === trace && s.name === name,
      );
      expect(span!.parentSpanId).toBe(parent);
      expect(span!.attributes["hotelops.face"]).toBe(face);
    }
  });

  it("log lines written during a request carry its request id and trace id", async () => {
    const trace = traceId();
    const res = await fetch(`${baseUrl}/api/v1/status`, {
      headers: { traceparent: `00-${trace}-${spanId()}-01`, "x-request-id": "req-trace-test-1" },
    });
    expect(res.status).toBe(200);
    const line = lines.find((l) => l.requestId === "req-trace-test-1");
    expect(line).toMatchObject({ msg: "call", requestId: "req-trace-test-1", traceId: trace });
  });
});
