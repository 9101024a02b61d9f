import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { verifyTarget, type Resolver } from "../../src/modules/webhooks/address.ts";
import { createSender, maxResponseBytes } from "../../src/modules/webhooks/sender.ts";
import { createTestCa, startReceiver, type Receiver, type TestCa } from "../helpers/webhooks.ts";

let ca: TestCa;
let receiver: Receiver;
let sender: ReturnType<typeof createSender>;
const loopback: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];
const policy = { allowPrivate: true };

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  sender = createSender({ extraCa: readFileSync(ca.caFile, "utf8") });
});
afterAll(async () => {
  await sender?.close();
  await receiver?.close();
});

async function post(url: string, timeoutMs = 2_000, resolver: Resolver = loopback) {
  const target = await verifyTarget(url, policy, resolver);
  return sender.send({ target, headers: { "content-type": "application/json" }, body: Buffer.from("{}"), timeoutMs });
}

describe("sender", () => {
  it("counts a 2xx as success and reports status and duration", async () => {
    receiver.behave((_q, res) => {
      res.writeHead(202);
      res.end();
    });
    const r = await post(receiver.url());
    expect(r).toMatchObject({ httpStatus: 202, errorClass: null, errorMessage: null });
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("does not follow redirects: a 3xx is a failure", async () => {
    const before = receiver.received.length;
    receiver.behave((req, res) => {
      res.writeHead(req.url === "/hook" ? 302 : 204, { location: receiver.url("/elsewhere") });
      res.end();
    });
    const r = await post(receiver.url());
    expect(r).toMatchObject({ httpStatus: 302, errorClass: "redirect" });
    await new Promise((res) => setTimeout(res, 100));
    expect(receiver.received.slice(before).map((x) => x.path)).toEqual(["/hook"]);
  });

  it("times out a slow receiver within the budget", async () => {
    receiver.behave((_q, res) => {
      setTimeout(() => {
        res.writeHead(204);
        res.end();
      }, 3_000);
    });
    const started = Date.now();
    const r = await post(receiver.url(), 300);
    expect(r).toMatchObject({ httpStatus: null, errorClass: "timeout" });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("times out a receiver that sends headers and then trickles the body", async () => {
    receiver.behave((_q, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const t = setInterval(() => res.write("x"), 100);
      res.on("close", () => clearInterval(t));
    });
    const r = await post(receiver.url(), 500);
    expect(r.errorClass).toBe("timeout");
  });

  it("consumes at most 64 KiB of a huge answer and drops the connection", async () => {
    let written = 0;
    let closed!: () => void;
    const closedP = new Promise<void>((r) => (closed = r));
    receiver.behave((_q, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const chunk = Buffer.alloc(16 * 1024, 1);
      const pump = () => {
        while (written < 50 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", closed);
      pump();
    });
    const started = Date.now();
    const r = await post(receiver.url(), 5_000);
    expect(r).toMatchObject({ httpStatus: 200, errorClass: null });
    await closedP;
    expect(Date.now() - started).toBeLessThan(3_000);
    // Far less than the 50 MiB on offer went over the wire (socket buffers hold a little more than 64 KiB).
    expect(written).toBeLessThan(8 * 1024 * 1024);
    expect(maxResponseBytes).toBe(64 * 1024);
  });

  it("verifies TLS against the host name (SNI): a certificate for another name fails", async () => {
    receiver.behave((_q, res) => {
      res.writeHead(204);
      res.end();
    });
    // The certificate names receiver.test and localhost, not other.test (same IP).
    const r = await post(receiver.url("/hook", "other.test"));
    expect(r.errorClass).toBe("tls");
    // And an untrusted CA fails too.
    const plain = createSender();
    const target = await verifyTarget(receiver.url(), policy, loopback);
    const r2 = await plain.send({ target, headers: {}, body: Buffer.from("{}"), timeoutMs: 2_000 });
    expect(r2.errorClass).toBe("tls");
    await plain.close();
  });

  it("connects to the verified IP: DNS that changes between check and connect cannot redirect the socket", async () => {
    receiver.behave((_q, res) => {
      res.writeHead(204);
      res.end();
    });
    const answers = [["127.0.0.1"], ["169.254.169.254"], ["10.0.0.1"]];
    const calls: string[] = [];
    const rebinding: Resolver = async (host) => {
      calls.push(host);
      return (answers.shift() ?? ["169.254.169.254"]).map((address) => ({ address, family: 4 as const }));
    };
    const before = receiver.received.length;
    // receiver.test is not in the system resolver: the connection can only have used the pinned address.
    const r = await post(receiver.url("/pinned"), 2_000, rebinding);
    expect(r).toMatchObject({ httpStatus: 204, errorClass: null });
    expect(calls).toEqual(["receiver.test"]);
    expect(receiver.received.slice(before).map((x) => x.path)).toEqual(["/pinned"]);
    // The next check sees the rebinding answer and refuses before any connection.
    await expect(post(receiver.url("/pinned"), 2_000, rebinding)).rejects.toThrow(/non-public/);
    expect(receiver.received.length).toBe(before + 1);
  });

  it("reports a refused connection as a connection error", async () => {
    const r = await post("https://receiver.test:1/", 1_000).catch((e: Error) => e);
    // Port 1 fails the address rules before any connection.
    expect(r).toBeInstanceOf(Error);
    const closedPort = await new Promise<number>((resolve) => {
      void import("node:net").then(({ createServer }) => {
        const s = createServer();
        s.listen(0, "127.0.0.1", () => {
          const port = (s.address() as { port: number }).port;
          s.close(() => resolve(port));
        });
      });
    });
    const r2 = await post(`https://receiver.test:${closedPort}/`, 1_000);
    expect(r2).toMatchObject({ httpStatus: null, errorClass: "connection" });
  });
});
