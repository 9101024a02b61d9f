// GET /api/v1/status on every face of the service (REST gateway, Connect JSON, gRPC-Web, gRPC over h2c with a
// @grpc/grpc-js client) side by side with bare handlers doing the same database read: node:http + pg for the
// HTTP/1.1 faces, node:http2 + pg for gRPC. The service and the bare servers each run in a child process
// (bench/harness.ts), so the figures and the memory are theirs, not the load generators'.
// Targets (issue 18): REST >= 0.85x and p99 <= 1.5x; Connect >= 0.8x and p99 <= 1.5x; gRPC-Web and gRPC >= 0.8x.
import * as grpc from "@grpc/grpc-js";
import autocannon from "autocannon";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetStatusRequestSchema } from "../gen/hotelops/status/v1/status_pb.js";
import { benchDatabase, load, measured, startBare, startService, table, type Result } from "./harness.ts";

const RPC = "/hotelops.status.v1.StatusService/GetStatus";
const request = toBinary(GetStatusRequestSchema, create(GetStatusRequestSchema));
// the empty request in one gRPC-Web frame: five zero bytes (a string: autocannon's worker thread takes no Buffer)
const grpcWebBody = "\0".repeat(5);

export async function benchStatus(): Promise<void> {
  const database = await benchDatabase();
  const env = { DATABASE_URL: database.url };
  const service = await startService(database.url);
  // BENCH_COMPARE_DIR=<another checkout>: its service is measured in the same run, each face right after ours
  const compareDir = process.env.BENCH_COMPARE_DIR;
  const other = compareDir
    ? await startService(database.url, { dir: compareDir, name: "compared service" })
    : undefined;
  const bare1 = await startBare("bare node:http + pg", "bare-status.ts", { ...env, BARE: "http1" });
  const bare2 = await startBare("bare node:http2 + pg", "bare-status.ts", { ...env, BARE: "http2" });
  try {
    const svc = `http://127.0.0.1:${service.port}`;
    const cmp = `http://127.0.0.1:${other?.port}`;
    /** The same face on the compared checkout's service, when there is one. */
    const compared = async (rows: Result[], name: string, run: (base: string) => Promise<Result>) => {
      if (other !== undefined) rows.push({ ...(await run(cmp)), name: `${name} (compared)` });
    };
    const h1 = `http://127.0.0.1:${bare1.port}`;
    const json = { method: "POST" as const, body: "{}", headers: { "content-type": "application/json" } };
    const web = {
      method: "POST" as const,
      body: grpcWebBody,
      headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
    };
    await warmUp([`${h1}/api/v1/status`, `${svc}/api/v1/status`, ...(other ? [`${cmp}/api/v1/status`] : [])], {});
    await warmUp([`${h1}${RPC}`, `${svc}${RPC}`, ...(other ? [`${cmp}${RPC}`] : [])], json);
    await warmUp([`${h1}${RPC}`, `${svc}${RPC}`, ...(other ? [`${cmp}${RPC}`] : [])], web);
    const rest = [await load("bare node:http + pg GET (baseline)", { url: `${h1}/api/v1/status` })];
    rest.push(await load("REST gateway GET /api/v1/status", { url: `${svc}/api/v1/status` }));
    await compared(rest, "REST", (b) => load("REST", { url: `${b}/api/v1/status` }));
    table(rest, rest[0]!);
    const connect = [await load("bare node:http + pg POST JSON", { url: `${h1}${RPC}`, ...json })];
    connect.push(await load("Connect POST GetStatus (JSON)", { url: `${svc}${RPC}`, ...json }));
    await compared(connect, "Connect", (b) => load("Connect", { url: `${b}${RPC}`, ...json }));
    table(connect, rest[0]!);
    const grpcWeb = [await load("bare node:http gRPC-Web frames", { url: `${h1}${RPC}`, ...web })];
    grpcWeb.push(await load("gRPC-Web GetStatus (binary, HTTP/1.1)", { url: `${svc}${RPC}`, ...web }));
    await compared(grpcWeb, "gRPC-Web", (b) => load("gRPC-Web", { url: `${b}${RPC}`, ...web }));
    table(grpcWeb, grpcWeb[0]!);
    const grpcs = [await grpcLoad("bare node:http2 + pg gRPC (baseline)", bare2.port!)];
    grpcs.push(await grpcLoad("gRPC GetStatus (h2c, @grpc/grpc-js)", service.port!));
    await compared(grpcs, "gRPC", () => grpcLoad("gRPC", other!.port!));
    table(grpcs, grpcs[0]!);
    const ratio = (a: Result, b: Result) =>
      `${(a.rps / b.rps).toFixed(2)}x, p99 ${(a.p99 / Math.max(1, b.p99)).toFixed(2)}x`;
    console.log(
      `\nREST ${ratio(rest[1]!, rest[0]!)} (target >= 0.85x, <= 1.5x); Connect ${ratio(connect[1]!, rest[0]!)} of the bare GET (target >= 0.8x, <= 1.5x), ${ratio(connect[1]!, connect[0]!)} of the bare POST; gRPC-Web ${ratio(grpcWeb[1]!, grpcWeb[0]!)}, gRPC ${ratio(grpcs[1]!, grpcs[0]!)} (target >= 0.8x)`,
    );
    console.log(service.summary());
    if (other !== undefined) console.log(other.summary());
  } finally {
    await service.stop();
    await other?.stop();
    await bare1.stop();
    await bare2.stop();
    await database.stop();
  }
}

/**
 * Unmeasured load on each HTTP/1.1 face of every server first (BENCH_WARMUP_SECONDS each, default 1; 0: none), so
 * that each is measured JIT-compiled, as a running service is: a 3 s phase otherwise counts the service's (much
 * larger) compilation against it and not the bare handler's.
 */
async function warmUp(
  urls: string[],
  request: { method?: "GET" | "POST"; body?: string; headers?: Record<string, string> },
): Promise<void> {
  const seconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
  if (seconds <= 0) return;
  for (const url of urls) {
    const run = await autocannon({ url, connections: 10, duration: seconds, workers: 1, ...request });
    if (run.non2xx + run.errors > 0) throw new Error(`warm-up of ${url}: ${run.non2xx} non-2xx, ${run.errors} errors`);
  }
}

/**
 * Unary GetStatus calls from one @grpc/grpc-js channel (one HTTP/2 connection, as an internal caller holds it),
 * `concurrency` in flight for BENCH_SECONDS; latency per call.
 */
async function grpcLoad(name: string, port: number, concurrency = 50): Promise<Result> {
  return measured(name, port, async () => {
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const call = (): Promise<void> =>
      new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          RPC,
          (m: Uint8Array) => Buffer.from(m),
          (b: Buffer) => b,
          request,
          (err, value) => (err || value === undefined ? reject(err ?? new Error("no answer")) : resolve()),
        ),
      );
    try {
      await call(); // connect before the clock starts
      const seconds = Number(process.env.BENCH_SECONDS ?? 8);
      const until = performance.now() + seconds * 1000;
      const ms: number[] = [];
      let errors = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < until) {
            const t = performance.now();
            await call().then(
              () => ms.push(performance.now() - t),
              () => errors++,
            );
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      ms.sort((a, b) => a - b);
      const at = (q: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] ?? 0);
      return { name, rps: Math.round(ms.length / elapsed), p50: at(0.5), p99: at(0.99), errors, requests: ms.length };
    } finally {
      client.close();
    }
  });
}
