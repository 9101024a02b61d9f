import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { create, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

async function ask<T extends typeof v1.ServerReflection | typeof v1alpha.ServerReflection>(
  service: T,
  request: object,
) {
  const client = createClient(service as typeof v1.ServerReflection, createGrpcTransport({ baseUrl: app.baseUrl }));
  async function* one() {
    yield create(v1.ServerReflectionRequestSchema, request);
  }
  const out = [];
  for await (const res of client.serverReflectionInfo(one())) out.push(res);
  expect(out).toHaveLength(1);
  return out[0]!;
}

describe("gRPC server reflection", () => {
  it("lists the served services (v1 and v1alpha)", async () => {
    for (const service of [v1.ServerReflection, v1alpha.ServerReflection]) {
      const res = await ask(service, { messageRequest: { case: "listServices", value: "*" } });
      expect(res.messageResponse.case).toBe("listServicesResponse");
      const names =
        res.messageResponse.case === "listServicesResponse" ? res.messageResponse.value.service.map((s) => s.name) : [];
      expect(names).toEqual(
        expect.arrayContaining([
          "hotelops.status.v1.StatusService",
          "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
        ]),
      );
    }
  });

  it("returns the file of a symbol with its imports", async () => {
    const res = await ask(v1.ServerReflection, {
      messageRequest: { case: "fileContainingSymbol", value: "hotelops.status.v1.StatusService" },
    });
    expect(res.messageResponse.case).toBe("fileDescriptorResponse");
    if (res.messageResponse.case !== "fileDescriptorResponse") return;
    const names = res.messageResponse.value.fileDescriptorProto.map(
      (b) => fromBinary(FileDescriptorProtoSchema, b).name,
    );
    expect(names).toEqual(
      expect.arrayContaining([
        "hotelops/status/v1/status.proto",
        "google/api/annotations.proto",
        "google/api/http.proto",
      ]),
    );
  });

  it("answers NOT_FOUND for an unknown symbol", async () => {
    const res = await ask(v1.ServerReflection, {
      messageRequest: { case: "fileContainingSymbol", value: "no.such.Service" },
    });
    expect(res.messageResponse.case).toBe("errorResponse");
  });
});

describe("gRPC health", () => {
  it("reports SERVING overall and per service, and NOT_FOUND for unknown services", async () => {
    const client = createClient(Health, createGrpcTransport({ baseUrl: app.baseUrl }));
    expect((await client.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await client.check({ service: "hotelops.status.v1.StatusService" })).status).toBe(
      HealthCheckResponse_ServingStatus.SERVING,
    );
    await expect(client.check({ service: "nope.Service" })).rejects.toThrow(/unknown service/);
  });
});
