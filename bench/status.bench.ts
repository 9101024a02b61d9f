// GET /api/v1/status on every face of the service (REST gateway, Connect JSON, gRPC-Web, gRPC over h2c with a
// @grpc/grpc-js client) side by side with bare handlers doing the same database read: node:http + pg for the
// HTTP/1.1 faces, node:http2 + pg for gRPC. The service and the bare servers each run in a child process
// (bench/harness.ts), so the figures and the memory are theirs, not the load generators'.
// Each face runs BENCH_ROUNDS times (default 3) alternating with its baseline; the ratios are medians of the rounds'.
// Targets (issue 18): REST >= 0.85x and p99 <= 1.5x; Connect >= 0.8x and p99 <= 1.5x; gRPC-Web and gRPC >= 0.8x.
import * as grpc from "@grpc/grpc-js";
import autocannon from "autocannon";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetStatusRequestSchema } from "../gen/hotelops/status/v1/status_pb.js";
import { benchDatabase, load, measured, median, startBare, startService, table, type Result } from "./harness.ts";

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
  // the peers a user would otherwise pick, on the same database read (bench/peer-status.ts)
  const fastify = await startBare("Fastify 5 + pg", "peer-status.ts", { ...env, PEER: "fastify" });
  const connectNode = await startBare("plain connect-node", "peer-status.ts", { ...env, PEER: "connect-node" });
  const grpcJs = await startBare("plain @grpc/grpc-js server", "peer-status.ts", { ...env, PEER: "grpc-js" });
  try {
    const svc = `http://127.0.0.1:${service.port}`;
    const cmp = `http://127.0.0.1:${other?.port}`;
    /** The same face on the compared checkout's service, when there is one. */
    const compared = (run: (base: string) => Promise<Result>) => (other === undefined ? [] : [() => run(cmp)]);
    const h1 = `http://127.0.0.1:${bare1.port}`;
    const fy = `http://127.0.0.1:${fastify.port}`;
    const cn = `http://127.0.0.1:${connectNode.port}`;
    const json = { method: "POST" as const, body: "{}", headers: { "content-type": "application/json" } };
    const web = {
      method: "POST" as const,
      body: grpcWebBody,
      headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
    };
    await warmUp(
      [
        `${h1}/api/v1/status`,
        `${fy}/api/v1/status`,
        `${svc}/api/v1/status`,
        ...(other ? [`${cmp}/api/v1/status`] : []),
      ],
      {},
    );
    await warmUp([`${h1}${RPC}`, `${cn}${RPC}`, `${svc}${RPC}`, ...(other ? [`${cmp}${RPC}`] : [])], json);
    await warmUp([`${h1}${RPC}`, `${svc}${RPC}`, ...(other ? [`${cmp}${RPC}`] : [])], web);
    const restBare = () => load("bare node:http + pg GET (baseline)", { url: `${h1}/api/v1/status` });
    const rest = await rounds([
      restBare,
      () => load("REST gateway GET /api/v1/status", { url: `${svc}/api/v1/status` }),
      ...compared((b) => load("REST (compared)", { url: `${b}/api/v1/status` })),
      () => load("Fastify 5 + pg GET (peer)", { url: `${fy}/api/v1/status` }),
    ]);
    const connect = await rounds([
      () => load("bare node:http + pg POST JSON", { url: `${h1}${RPC}`, ...json }),
      () => load("Connect POST GetStatus (JSON)", { url: `${svc}${RPC}`, ...json }),
      ...compared((b) => load("Connect (compared)", { url: `${b}${RPC}`, ...json })),
      restBare,
      () => load("plain connect-node POST JSON (peer)", { url: `${cn}${RPC}`, ...json }),
    ]);
    const grpcWeb = await rounds([
      () => load("bare node:http gRPC-Web frames", { url: `${h1}${RPC}`, ...web }),
      () => load("gRPC-Web GetStatus (binary, HTTP/1.1)", { url: `${svc}${RPC}`, ...web }),
      ...compared((b) => load("gRPC-Web (compared)", { url: `${b}${RPC}`, ...web })),
    ]);
    const grpcs = await rounds([
      () => grpcLoad("bare node:http2 + pg gRPC (baseline)", bare2.port!),
      () => grpcLoad("gRPC GetStatus (h2c, @grpc/grpc-js)", service.port!),
      ...compared(() => grpcLoad("gRPC (compared)", other!.port!)),
      () => grpcLoad("plain @grpc/grpc-js server (peer)", grpcJs.port!),
    ]);
    const ratio = (r: Rounds, of: number, base: number) =>
      `${r.rps(of, base).toFixed(2)}x, p99 ${r.p99(of, base).toFixed(2)}x`;
    /** " MISSED" when a ratio is below its target (or a p99 ratio above its bound). */
    const verdict = (r: Rounds, of: number, base: number, min: number, maxP99 = Infinity) =>
      r.rps(of, base) < min || r.p99(of, base) > maxP99 ? " MISSED" : "";
    const peer = (r: Rounds) => r.rows.length - 1; // each phase's peer is its last participant
    const last = peer(connect) - 1; // the bare GET, measured in the Connect rounds too
    console.log(
      [
        `\nmedians of ${ROUNDS} rounds, ours over the bare handler:`,
        `  REST ${ratio(rest, 1, 0)} (target >= 0.85x, p99 <= 1.5x)${verdict(rest, 1, 0, 0.85, 1.5)}`,
        `  Connect ${ratio(connect, 1, last)} of the bare GET (target >= 0.8x, p99 <= 1.5x)${verdict(connect, 1, last, 0.8, 1.5)}, ${ratio(connect, 1, 0)} of the bare POST`,
        `  gRPC-Web ${ratio(grpcWeb, 1, 0)} (target >= 0.8x)${verdict(grpcWeb, 1, 0, 0.8)}`,
        `  gRPC ${ratio(grpcs, 1, 0)} (target >= 0.8x)${verdict(grpcs, 1, 0, 0.8)}`,
        `ours over the peer a user would otherwise pick:`,
        `  REST over Fastify 5 ${ratio(rest, 1, peer(rest))} (target >= 1.0x)${verdict(rest, 1, peer(rest), 1)}`,
        `  Connect over plain connect-node ${ratio(connect, 1, peer(connect))} (target >= 1.0x)${verdict(connect, 1, peer(connect), 1)}`,
        `  gRPC over a plain grpc-js server ${ratio(grpcs, 1, peer(grpcs))} (target >= 1.0x)${verdict(grpcs, 1, peer(grpcs), 1)}`,
      ].join("\n"),
    );
    console.log(service.summary());
    if (other !== undefined) console.log(other.summary());
  } finally {
    await service.stop();
    await other?.stop();
    await bare1.stop();
    await bare2.stop();
    await fastify.stop();
    await connectNode.stop();
    await grpcJs.stop();
    await database.stop();
  }
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Rounds {
  /** Each participant's median run (req/s, p50, p99 and CPU each the median of its runs; memory the highest peak). */
  rows: Result[];
  /** The median over the rounds of participant `of`'s req/s (or p99) over participant `base`'s in the same round. */
  rps(of: number, base: number): number;
  p99(of: number, base: number): number;
}

/**
 * BENCH_ROUNDS rounds of every participant (a baseline first, then the faces), each round in the opposite order of
 * the one before, printed as one table. Two load phases a few seconds apart moved 25% on a busy 2-core box; a ratio
 * taken within each round and then its median counts such a moment once.
 */
async function rounds(participants: (() => Promise<Result>)[]): Promise<Rounds> {
  const runs: Result[][] = participants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = participants.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) runs[i]!.push(await participants[i]!());
  }
  const rows = runs.map((r) => ({
    name: r[0]!.name,
    rps: Math.round(median(r.map((x) => x.rps))),
    p50: median(r.map((x) => x.p50)),
    p99: median(r.map((x) => x.p99)),
    errors: r.reduce((n, x) => n + x.errors, 0),
    peakMiB: Math.max(...r.map((x) => x.peakMiB ?? 0)),
    cpuUs: Math.round(median(r.map((x) => x.cpuUs ?? 0))),
  }));
  table(rows, rows[0]!);
  const per = (key: "rps" | "p99") => (of: number, base: number) =>
    median(runs[of]!.map((x, k) => x[key] / Math.max(1, runs[base]![k]![key])));
  return { rows, rps: per("rps"), p99: per("p99") };
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
