// The benchmark's HTTPS receiver in its own process, so it does not share the service's event loop.
// Reports each request's arrival time (ms since the epoch, sub-ms precision) to the parent over IPC, batched.
import https from "node:https";
import { readFileSync } from "node:fs";

const [keyFile, certFile] = process.argv.slice(2) as [string, string];
let pending: number[] = [];
const server = https.createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
  req.resume();
  req.on("end", () => {
    pending.push(performance.timeOrigin + performance.now());
    res.writeHead(204);
    res.end();
  });
});
setInterval(() => {
  if (pending.length === 0) return;
  process.send?.(pending);
  pending = [];
}, 2).unref();
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as { port: number }).port }));
process.on("disconnect", () => process.exit(0));
