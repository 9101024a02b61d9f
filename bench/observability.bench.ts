// The cost of metrics and tracing on the status endpoint: the same REST GET /api/v1/status against three apps
// on one database, side by side: METRICS=off and no tracing, metrics on (the default), metrics + tracing
// exported over OTLP/HTTP to a local sink that discards the spans (every request traced, with its statement span).
import http from "node:http";
import { benchDatabase, load, startService, table, type Measured, type Result } from "./harness.ts";

export async function benchObservability(): Promise<void> {
  const database = await benchDatabase();
  let spans = 0;
  const sink = http.createServer((req, res) => {
    req.on("data", () => undefined);
    req.on("end", () => {
      spans++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;
  try {
    await compare(database.url, sinkUrl, () => spans);
  } finally {
    sink.close();
    await database.stop();
  }
}

async function compare(databaseUrl: string, sinkUrl: string, exports: () => number): Promise<void> {
  const configs = [
    ["metrics off, tracing off", { METRICS: "off" }],
    ["metrics on (default), tracing off", {}],
    ["metrics on, tracing on (OTLP)", { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl }],
  ] as const;
  // All three run at once, each a service process of its own, and take turns, three rounds, so a noisy neighbour
  // weighs on each about equally; the median round of each is reported.
  const apps: Measured[] = [];
  for (const [name, env] of configs) apps.push(await startService(databaseUrl, { env, name }));
  try {
    const rounds: Result[][] = configs.map(() => []);
    for (let round = 0; round < 3; round++) {
      for (const [i, [name]] of configs.entries())
        rounds[i]!.push(await load(`status: ${name}`, { url: `http://127.0.0.1:${apps[i]!.port}/api/v1/status` }));
    }
    const results = rounds.map((r) => [...r].sort((a, b) => a.rps - b.rps)[1]!);
    const [off, metrics, traced] = results as [Result, Result, Result];
    table(results, off);
    console.log(
      `metrics: ${(metrics.rps / off.rps).toFixed(2)}x throughput, metrics + tracing: ${(traced.rps / off.rps).toFixed(2)}x (p99 ${off.p99} / ${metrics.p99} / ${traced.p99} ms); ${exports()} OTLP exports`,
    );
    for (const app of apps) console.log(app.summary());
  } finally {
    for (const app of apps) await app.stop();
  }
}
