import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { startTestApp, type TestApp } from "../helpers/app.ts";

let app: TestApp;
const METHOD = "/hotelops.admin.v1.AdminService/ListClients";
const MESSAGE = "Authentication required: send Authorization: Bearer <access token>.";

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe("grpc-message as the gRPC spec encodes it", () => {
  it("a @grpc/grpc-js client reads the message as it was written (no %3A)", async () => {
    const client = new grpc.Client(`127.0.0.1:${app.port}`, grpc.credentials.createInsecure());
    try {
      const err = await new Promise<grpc.ServiceError | null>((resolve) => {
        client.makeUnaryRequest(
          METHOD,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          (e) => resolve(e),
        );
      });
      expect(err?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(err?.details).toBe(MESSAGE);
    } finally {
      client.close();
    }
  });

  it("gRPC-Web: the trailer frame carries the message with only the spec's escapes", async () => {
    const res = await fetch(`${app.baseUrl}${METHOD}`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const trailer = body.subarray(body.indexOf(0x80) + 5).toString("utf8");
    expect(trailer).toContain(`grpc-message: ${MESSAGE}\r\n`);
  });
});
