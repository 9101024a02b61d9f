import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { LOG_FLUSH_MS } from "../../src/lib/logger.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { killAllServices, startService, until, type ServiceProcess } from "../helpers/service-process.ts";

// The service writes its log lines to standard output in batches (src/lib/logger.ts): none may be lost or held.
afterAll(killAllServices);

/** The access lines ("call") of the service's output, by request id. */
function accessLines(service: ServiceProcess): Map<string, Record<string, unknown>> {
  const lines = new Map<string, Record<string, unknown>>();
  for (const text of service.output().split("\n")) {
    if (!text.startsWith("{")) continue;
    const line = JSON.parse(text) as Record<string, unknown>;
    if (line.msg === "call") lines.set(line.requestId as string, line);
  }
  return lines;
}

describe("access log lines on standard output", () => {
  it(
    "every call has its line, a quiet service writes it within the flush interval, a graceful stop loses none",
    { timeout: 90_000 },
    async () => {
      const service = await startService({ DATABASE_URL: await freshDatabaseUrl(), ROLE: "api", LOG_LEVEL: "info" });
      const connect = createClient(
        StatusService,
        createConnectTransport({ baseUrl: service.base, httpVersion: "1.1", useBinaryFormat: false }),
      );

      // one call on a quiet service: its line is on stdout soon, not when a buffer fills
      const started = Date.now();
      const first = await fetch(`${service.base}/api/v1/status`, { headers: { "x-request-id": "quiet-1" } });
      expect(first.status).toBe(200);
      await until(async () => accessLines(service).has("quiet-1"), 5_000, "the quiet call's line");
      expect(Date.now() - started).toBeLessThan(LOG_FLUSH_MS + 1_000);
      expect(accessLines(service).get("quiet-1")).toMatchObject({
        level: 30,
        requestId: "quiet-1",
        rpc: "hotelops.status.v1.StatusService/GetStatus",
        transport: "rest",
        code: "ok",
        ms: expect.any(Number),
        time: expect.any(String),
      });

      // gRPC (h2c) calls have their lines too, with our error code for a refused one
      const grpc = createGrpcTransport({ baseUrl: service.base });
      await createClient(StatusService, grpc).getStatus({}, { headers: { "x-request-id": "grpc-ok" } });
      await expect(
        createClient(MobileService, grpc).getDashboard({}, { headers: { "x-request-id": "grpc-refused" } }),
      ).rejects.toThrow();
      await until(async () => accessLines(service).has("grpc-refused"), 5_000, "the gRPC calls' lines");
      expect(accessLines(service).get("grpc-ok")).toMatchObject({ transport: "grpc", code: "ok" });
      expect(accessLines(service).get("grpc-refused")).toMatchObject({
        rpc: "hotelops.mobile.v1.MobileService/GetDashboard",
        transport: "grpc",
        code: "unauthorized",
      });

      // many calls on two faces, then SIGTERM at once: every line is out before the process exits
      const ids: string[] = [];
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from({ length: 30 }, async (_, i) => {
            const id = `burst-${batch}-${i}`;
            ids.push(id);
            if (i % 2 === 0) {
              const res = await fetch(`${service.base}/api/v1/status`, { headers: { "x-request-id": id } });
              expect(res.status).toBe(200);
              await res.arrayBuffer();
            } else {
              await connect.getStatus({}, { headers: { "x-request-id": id } });
            }
          }),
        );
      }
      service.child.kill("SIGTERM");
      expect(await service.exited).toBe(0);
      if (!service.child.stdout!.closed) await once(service.child.stdout!, "close");
      const lines = accessLines(service);
      expect(ids.filter((id) => !lines.has(id))).toEqual([]);
      expect(lines.get("burst-3-1")).toMatchObject({ transport: "connect", code: "ok" });
      expect(lines.get("burst-3-2")).toMatchObject({ transport: "rest", code: "ok" });
      expect(service.output()).toContain('"msg":"shutting down"');
    },
  );
});

describe("the stdout log destination at the end of a process", () => {
  for (const [how, code] of [
    ["throw", 1],
    ["exit", 3],
    ["end", 0],
  ] as const) {
    it(`writes every buffered line when the process ends by ${how}`, async () => {
      const child = spawn(process.execPath, [join(import.meta.dirname, "../fixtures/log-then-exit.ts"), how], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      const [exitCode] = (await once(child, "close")) as [number];
      expect(exitCode).toBe(code);
      const lines = out.split("\n").filter((l) => l.includes('"before the end"'));
      expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([0, 1, 2, 3, 4]);
    });
  }
});
