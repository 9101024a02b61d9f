// With tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT), the trace id of a caller's W3C `traceparent` is still on every
// log line of its request, on every face, and on the lines of the jobs the request enqueued.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromJson } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import {
  ConnectivityService,
  CreateReservationEventRequestSchema,
} from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { tracingEnabled } from "../../src/observability/tracing.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { until } from "../helpers/service-process.ts";

let app: App;
let baseUrl: string;
let property: { id: string; code: string };
let partner: { accessToken: string };
const lines: Record<string, unknown>[] = [];

const traceId = (): string => randomBytes(16).toString("hex");
const traceparent = (trace: string): string => `00-${trace}-${randomBytes(8).toString("hex")}-01`;

beforeAll(async () => {
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
    DATA_DIR: mkdtempSync(join(tmpdir(), "trace-logs-")),
    SHUTDOWN_GRACE_MS: "2000",
  });
  app = await createApp(config, { logger: createLogger("debug", logs) });
  baseUrl = `http://127.0.0.1:${app.port}`;
  property = await createTestProperty(app, { businessDate: "2027-01-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inventory.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "102", roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-01-01",
    to: "2027-12-31",
    amountMinor: 25000n,
  });
  for (const [kind, code] of [
    ["room_type", "DBL"],
    ["rate_plan", "BAR"],
  ] as const)
    await setProviderMapping(app.db.pool, {
      propertyCode: property.code,
      provider: "acme",
      kind,
      code,
      externalCode: code,
    });
  partner = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
});
afterAll(async () => {
  await app?.close();
});

const linesOf = (requestId: string) => lines.filter((l) => l.requestId === requestId);

describe("the caller's trace id on every log line, with tracing off", () => {
  it("tracing is off in this process", () => {
    expect(tracingEnabled()).toBe(false);
  });

  it("REST, Connect, gRPC-Web and gRPC: every line of the request carries the trace id (refused calls too)", async () => {
    const rest = traceId();
    await (
      await fetch(`${baseUrl}/api/v1/status`, {
        headers: { traceparent: traceparent(rest), "x-request-id": "tl-rest" },
      })
    ).arrayBuffer();
    const refused = traceId();
    const res = await fetch(`${baseUrl}/api/mobile/v1/dashboard`, {
      headers: { traceparent: traceparent(refused), "x-request-id": "tl-refused", authorization: "Bearer not-a-token" },
    });
    expect(res.status).toBe(401);
    await res.arrayBuffer();
    const transports: Record<string, Transport> = {
      connect: createConnectTransport({ baseUrl, httpVersion: "1.1" }),
      "grpc-web": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
      grpc: createGrpcTransport({ baseUrl }),
    };
    const traces: Record<string, string> = { "tl-rest": rest, "tl-refused": refused };
    for (const [face, transport] of Object.entries(transports)) {
      const trace = traceId();
      traces[`tl-${face}`] = trace;
      await createClient(StatusService, transport).getStatus(
        {},
        { headers: { traceparent: traceparent(trace), "x-request-id": `tl-${face}` } },
      );
      const denied = traceId();
      traces[`tl-${face}-denied`] = denied;
      await expect(
        createClient(MobileService, transport).getDashboard(
          {},
          {
            headers: {
              traceparent: traceparent(denied),
              "x-request-id": `tl-${face}-denied`,
              authorization: "Bearer not-a-token",
            },
          },
        ),
      ).rejects.toThrow();
    }
    await until(async () => Object.keys(traces).every((id) => linesOf(id).length > 0), 5_000, "the calls' lines").catch(
      (err: unknown) => {
        throw new Error(
          `${String(err)}: none for ${Object.keys(traces)
            .filter((id) => linesOf(id).length === 0)
            .join(" ")}`,
        );
      },
    );
    for (const [requestId, trace] of Object.entries(traces))
      for (const line of linesOf(requestId)) expect(line, requestId).toMatchObject({ requestId, traceId: trace });
  });

  it("an invalid traceparent is ignored: no trace id (all-zero id, version ff, wrong length, upper case)", async () => {
    const bad = [
      `00-${"0".repeat(32)}-${"1".repeat(16)}-01`,
      `ff-${traceId()}-${"1".repeat(16)}-01`,
      `00-${traceId()}0-${"1".repeat(16)}-01`,
      `00-${traceId().toUpperCase()}-${"1".repeat(16)}-01`,
    ];
    for (const [i, value] of bad.entries())
      await (
        await fetch(`${baseUrl}/api/v1/status`, { headers: { traceparent: value, "x-request-id": `tl-bad-${i}` } })
      ).arrayBuffer();
    await until(async () => bad.every((_, i) => linesOf(`tl-bad-${i}`).length > 0), 5_000, "the lines");
    for (const i of bad.keys()) for (const line of linesOf(`tl-bad-${i}`)) expect(line.traceId).toBeUndefined();
  });

  it("a partner event's job logs under the trace of the request that queued it (REST and gRPC)", async () => {
    const body = (ref: string) => ({
      eventType: "NEW",
      externalReference: ref,
      arrivalDate: "2027-06-01",
      departureDate: "2027-06-03",
      currency: "TRY",
      holder: { name: "Channel Guest" },
      channel: "Booking.com",
      rooms: [{ roomTypeCode: "DBL", ratePlanCode: "BAR", adults: 2, children: 0, amountMinor: 50000 }],
      totalMinor: 50000,
    });
    const viaRest = traceId();
    const res = await fetch(`${baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
      method: "POST",
      headers: {
        ...bearer(partner.accessToken),
        "content-type": "application/json",
        "idempotency-key": newId(),
        traceparent: traceparent(viaRest),
      },
      body: JSON.stringify(body("TL-REST")),
    });
    expect(res.status).toBe(202);
    const restEvent = ((await res.json()) as { eventId: string }).eventId;
    const viaGrpc = traceId();
    const grpcEvent = (
      await createClient(ConnectivityService, createGrpcTransport({ baseUrl })).createReservationEvent(
        fromJson(CreateReservationEventRequestSchema, { propertyCode: property.code, ...body("TL-GRPC") }),
        { headers: { ...bearer(partner.accessToken), "idempotency-key": newId(), traceparent: traceparent(viaGrpc) } },
      )
    ).eventId;
    const applied = (eventId: string) =>
      lines.find((l) => l.msg === "reservation event applied" && l.eventId === eventId);
    await until(
      async () => applied(restEvent) !== undefined && applied(grpcEvent) !== undefined,
      10_000,
      "events applied",
    );
    expect(applied(restEvent)).toMatchObject({ status: "PROCESSED", traceId: viaRest });
    expect(applied(grpcEvent)).toMatchObject({ status: "PROCESSED", traceId: viaGrpc });
  });
});
