import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import https from "node:https";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

// No vitest imports here: the webhook benchmark uses the same CA and receiver.

export interface TestCa {
  dir: string;
  caFile: string;
  key: string;
  cert: string;
}

/** A throwaway CA and a server certificate for `receiver.test` and `localhost`, made with the openssl CLI. */
export function createTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), "webhook-ca-"));
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  run(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=Webhook Test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
  run("req", ...ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=receiver.test");
  writeFileSync(
    join(dir, "srv.ext"),
    "subjectAltName=DNS:receiver.test,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
  );
  run(
    "x509",
    "-req",
    "-in",
    "srv.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "srv.crt",
    "-days",
    "2",
    "-extfile",
    "srv.ext",
  );
  return {
    dir,
    caFile: join(dir, "ca.crt"),
    key: readFileSync(join(dir, "srv.key"), "utf8"),
    cert: readFileSync(join(dir, "srv.crt"), "utf8"),
  };
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Behavior = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A real HTTPS receiver on 127.0.0.1 recording every request; `behave` sets how it answers (default 204). */
export async function startReceiver(ca: TestCa) {
  const received: Received[] = [];
  let behavior: Behavior = (_req, res) => {
    res.writeHead(204);
    res.end();
  };
  const waiters: (() => void)[] = [];
  const server = https.createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push({ path: req.url ?? "", headers: req.headers, body, at: performance.now() });
      for (const w of waiters.splice(0)) w();
      behavior(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    received,
    url: (path = "/hook", host = "receiver.test") => `https://${host}:${port}${path}`,
    behave(b: Behavior) {
      behavior = b;
    },
    /** Resolves once `count` requests arrived (fails after `ms`). */
    async waitFor(count: number, ms = 5_000): Promise<Received[]> {
      const deadline = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`receiver got ${received.length} of ${count} requests within ${ms} ms`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
