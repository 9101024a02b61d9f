// What a gRPC user meets first: reflection that carries the proto's comments (as `buf curl --reflect` and grpcurl
// read them), and ReservationService calls without propertyCode (staff: the session's active property;
// clients: invalid_argument).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import * as reflection from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { seedReservation, seedRoomTypeAndRatePlan } from "../helpers/hotel-fixtures.ts";

const run = promisify(execFile);
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

async function fileOf(symbol: string) {
  const client = createClient(reflection.ServerReflection, createGrpcTransport({ baseUrl: app.baseUrl }));
  async function* one() {
    yield create(reflection.ServerReflectionRequestSchema, {
      messageRequest: { case: "fileContainingSymbol", value: symbol },
    });
  }
  for await (const res of client.serverReflectionInfo(one())) {
    if (res.messageResponse.case !== "fileDescriptorResponse") throw new Error(`no file for ${symbol}`);
    return res.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b));
  }
  throw new Error("no answer");
}

describe("gRPC reflection with the proto's comments", () => {
  it("serves source info: the service, method and field comments of reservation.proto", async () => {
    const file = (await fileOf("hotelops.reservation.v1.ReservationService")).find(
      (f) => f.name === "hotelops/reservation/v1/reservation.proto",
    )!;
    const commentAt = (path: number[]) =>
      file.sourceCodeInfo?.location.find((l) => l.path.join(".") === path.join("."))?.leadingComments ?? "";
    const serviceIndex = file.service.findIndex((s) => s.name === "ReservationService");
    const createIndex = file.service[serviceIndex]!.method.findIndex((m) => m.name === "CreateReservation");
    // FileDescriptorProto field 6 = service, ServiceDescriptorProto field 2 = method
    expect(commentAt([6, serviceIndex])).toContain("session's active property");
    expect(commentAt([6, serviceIndex, 2, createIndex])).toContain("Creates a reservation");
    const spans = file.sourceCodeInfo!.location.map((l) => l.span.length);
    expect(spans.every((n) => n === 3 || n === 4)).toBe(true);
  });

  it("is read by buf curl over gRPC (h2c) and Connect: it lists the methods and calls one by reflection", async () => {
    const buf = new URL("../../node_modules/.bin/buf", import.meta.url).pathname;
    const listed = await run(buf, [
      "curl",
      "--http2-prior-knowledge",
      "--protocol",
      "grpc",
      "--list-methods",
      app.baseUrl,
    ]);
    expect(listed.stdout).toContain("hotelops.reservation.v1.ReservationService/CreateReservation");
    const status = await run(buf, [
      "curl",
      "--http2-prior-knowledge",
      "--protocol",
      "connect",
      "-d",
      "{}",
      `${app.baseUrl}/hotelops.status.v1.StatusService/GetStatus`,
    ]);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: "operational" });
  });
});

describe("ReservationService without propertyCode", () => {
  it("staff over gRPC and Connect: acts on the session's active property", async () => {
    const p = await createTestProperty(app);
    const seeded = await seedRoomTypeAndRatePlan(app.deps.db.pool, p);
    const r = await seedReservation(app.deps.db.pool, seeded, {
      arrival: "2026-12-01",
      departure: "2026-12-03",
      nightly: [100_00n, 100_00n],
    });
    const staff = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
    for (const transport of [
      createGrpcTransport({ baseUrl: app.baseUrl }),
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    ]) {
      const client = createClient(ReservationService, transport);
      const page = await client.listReservations({}, { headers: bearer(staff.accessToken) });
      expect(page.reservations.map((x) => x.id)).toEqual([r.id]);
      const one = await client.getReservation({ reservationId: r.id }, { headers: bearer(staff.accessToken) });
      expect(one.reservation?.code).toBe(r.code);
    }
  });

  it("clients over gRPC and Connect: invalid_argument naming the field", async () => {
    const p = await createTestProperty(app);
    const internal = await createTestClient(app, {
      kind: "internal",
      provider: "pms",
      propertyCodes: [p.code],
      scopes: ["reservations.read"],
    });
    for (const transport of [
      createGrpcTransport({ baseUrl: app.baseUrl }),
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    ]) {
      const err = await createClient(ReservationService, transport)
        .listReservations({}, { headers: bearer(internal.accessToken) })
        .catch((e: unknown) => ConnectError.from(e));
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage).toBe("propertyCode: is required");
    }
  });
});
