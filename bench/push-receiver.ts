// The push bench's HTTPS receiver in its own process: for each ari.updated request it reports the arrival time
// (ms since the epoch), the event id, the property code, the pushed sequence and the part, batched over IPC.
import https from "node:https";
import { readFileSync } from "node:fs";

const [keyFile, certFile] = process.argv.slice(2) as [string, string];
let pending: { at: number; id: string; property: string; seq: string; part: number; cells: number }[] = [];
const server = https.createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    const b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id: string;
      property: { code: string };
      data: { seq: string; part: number; cells: unknown[] };
    };
    pending.push({
      at,
      id: b.id,
      property: b.property.code,
      seq: b.data.seq,
      part: b.data.part,
      cells: b.data.cells.length,
    });
    res.writeHead(204);
    res.end();
  });
});
setInterval(() => {
  if (pending.length === 0) return;
  process.send?.(pending);
  pending = [];
}, 5).unref();
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as { port: number }).port }));
process.on("disconnect", () => process.exit(0));
