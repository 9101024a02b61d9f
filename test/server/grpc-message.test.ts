import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { requirePythonGrpc } from "../helpers/prerequisites.ts";

const run = promisify(execFile);

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

  it("Python's grpcio reads the message as it was written", async () => {
    const python = requirePythonGrpc();
    const script = [
      "import grpc, json, sys",
      "channel = grpc.insecure_channel(sys.argv[1])",
      "call = channel.unary_unary(sys.argv[2], request_serializer=None, response_deserializer=None)",
      "try:",
      "    call(b'', timeout=10)",
      "except grpc.RpcError as e:",
      "    print(json.dumps({'code': e.code().name, 'details': e.details()}))",
    ].join("\n");
    const { stdout } = await run(python, ["-c", script, `127.0.0.1:${app.port}`, METHOD], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ code: "UNAUTHENTICATED", details: MESSAGE });
  });

  it("buf curl (gRPC protocol, schema from the server's reflection) prints the message as it was written", async () => {
    const buf = new URL("../../node_modules/.bin/buf", import.meta.url).pathname;
    const err = await run(
      buf,
      ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "-d", "{}", `http://127.0.0.1:${app.port}${METHOD}`],
      { timeout: 30_000 },
    ).then(
      () => null,
      (e: { stderr: string }) => e,
    );
    expect(err).not.toBeNull();
    expect(JSON.parse(err?.stderr ?? "")).toMatchObject({ code: "unauthenticated", message: MESSAGE });
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
