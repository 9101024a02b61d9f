import http from "node:http";
import type { AddressInfo } from "node:net";
import { serveMetrics, type MetricsEndpoint } from "../server/dispatch.ts";

/** METRICS_PORT: /metrics on a port of its own (also for ROLE=worker, which has no API port). */
export async function startMetricsServer(
  metrics: MetricsEndpoint,
  opts: { port: number; host: string; token: string | undefined },
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if ((req.url ?? "/").split("?")[0] === "/metrics")
      void serveMetrics(req, res, { render: metrics.render, contentType: metrics.contentType, token: opts.token });
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
