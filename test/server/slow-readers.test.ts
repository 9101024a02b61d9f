// Clients that stop reading their answers: after WRITE_STALL_TIMEOUT_MS with bytes still queued, an HTTP/1.1
// connection is closed and an HTTP/2 stream is reset, so such a client holds the server's memory for a bounded time
// (real sockets, real clock).
import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";

const STALL_MS = 1_500;
// the largest answer an anonymous client can ask for: the API reference's script bundle (about 1.5 MB)
const PATH = "/docs/swagger-ui-bundle.js";

let app: TestApp;
let bundleBytes = 0;
beforeAll(async () => {
  app = await startTestApp({ env: { WRITE_STALL_TIMEOUT_MS: String(STALL_MS), IDLE_TIMEOUT_MS: "60000" } });
  bundleBytes = (await (await fetch(`${app.baseUrl}${PATH}`)).arrayBuffer()).byteLength;
});
afterAll(async () => {
  await app?.close();
});

describe("a client that stops reading", () => {
  it("HTTP/1.1: pipelined answers it never reads end with the connection after the stall timeout", async () => {
    expect(bundleBytes).toBeGreaterThan(500_000);
    // more than the kernel's socket buffers on both sides can hold, so the server's own queue fills
    const requests = Math.ceil(80_000_000 / bundleBytes);
    const socket = net.connect(app.port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.pause();
    socket.write(`GET ${PATH} HTTP/1.1\r\nHost: localhost\r\n\r\n`.repeat(requests));
    // read nothing for well past the timeout, then take what the server still sends
    await new Promise((r) => setTimeout(r, STALL_MS * 4));
    let received = 0;
    socket.on("data", (chunk: Buffer) => (received += chunk.byteLength));
    socket.on("error", () => undefined);
    const ended = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 20_000);
      socket.once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.resume();
    });
    socket.destroy();
    expect(ended).toBe(true);
    // the server gave up: far less than every answer arrived
    expect(received).toBeLessThan(requests * bundleBytes * 0.9);
  }, 60_000);

  it("HTTP/2: streams whose answers it never reads are reset with CANCEL after the stall timeout", async () => {
    const session = http2.connect(app.baseUrl);
    session.on("error", () => undefined);
    try {
      const codes = await Promise.all(
        Array.from(
          { length: 8 },
          () =>
            new Promise<number | "complete">((resolve) => {
              const stream = session.request({ ":path": PATH });
              stream.on("error", () => undefined);
              stream.pause(); // never read: flow control stops the server's data, its queue stays full
              stream.once("end", () => resolve("complete"));
              stream.once("close", () => resolve(stream.rstCode));
            }),
        ),
      );
      expect(codes).toEqual(Array.from({ length: 8 }, () => http2.constants.NGHTTP2_CANCEL));
    } finally {
      session.destroy();
    }
  }, 60_000);
});
