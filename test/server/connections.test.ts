import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http2 from "node:http2";
import net from "node:net";
import { startTestApp, type TestApp } from "../helpers/app.ts";

// Small limits so the real-clock waits stay short; the defaults are in docs/operations/configuration.md.
const LIMITS = {
  CONNECTION_SNIFF_TIMEOUT_MS: "600",
  HEADERS_TIMEOUT_MS: "1000",
  REQUEST_TIMEOUT_MS: "1500",
  IDLE_TIMEOUT_MS: "1500",
  MAX_CONNECTIONS_PER_ADDRESS: "20",
  H2_MAX_CONCURRENT_STREAMS: "10",
};

let app: TestApp;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: LIMITS });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await app?.close();
});

function open(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(app.port, "127.0.0.1", () => resolve(s));
    s.on("error", reject);
    sockets.push(s);
  });
}

/** Milliseconds until the server closes the socket, or Infinity if it is still open after `withinMs`. */
function closedWithin(s: net.Socket, withinMs: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    if (s.destroyed) return resolve(0);
    const timer = setTimeout(() => resolve(Infinity), withinMs);
    s.once("close", () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
    s.on("error", () => undefined);
    s.resume();
  });
}

describe("connections that never complete a request are closed (real sockets, real clock)", () => {
  it("a connection that sends nothing, one byte, or half the HTTP/2 preface is closed after the sniff timeout", async () => {
    const silent = await open();
    const oneByte = await open();
    oneByte.write("P");
    const halfPreface = await open();
    halfPreface.write("PRI * HTTP/2.0\r\n");
    const waits = await Promise.all([silent, oneByte, halfPreface].map((s) => closedWithin(s, 4000)));
    for (const ms of waits) expect(ms).toBeLessThan(4000);
  });

  it("HTTP/1.1 slowloris (a header line every 300 ms) is closed at the headers timeout with 408", async () => {
    const s = await open();
    let answer = "";
    s.on("data", (d: Buffer) => (answer += d.toString()));
    s.write("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    const drip = setInterval(() => s.writable && s.write(`X-Drip-${Date.now()}: 1\r\n`), 300);
    const ms = await closedWithin(s, 6000);
    clearInterval(drip);
    expect(ms).toBeLessThan(6000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it("an idle keep-alive HTTP/1.1 connection is closed after the idle timeout", async () => {
    const s = await open();
    s.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(await closedWithin(s, 5000)).toBeLessThan(5000);
  });

  it("caps open connections per client address; a freed slot is usable again", async () => {
    const held: net.Socket[] = [];
    for (let i = 0; i < 20; i++) held.push(await open());
    const extra = await open();
    expect(await closedWithin(extra, 1000)).toBeLessThan(1000);
    for (const s of held) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const res = await fetch(`${app.baseUrl}/healthz`);
    expect(res.status).toBe(200);
  });

  it("an HTTP/2 session that sends the preface and nothing more is closed after the idle timeout", async () => {
    const session = http2.connect(app.baseUrl);
    session.on("error", () => undefined);
    const closed = await new Promise<number>((resolve) => {
      const timer = setTimeout(() => resolve(Infinity), 6000);
      session.once("close", () => {
        clearTimeout(timer);
        resolve(1);
      });
    });
    expect(closed).toBe(1);
  });
});

describe("HTTP/2 stream hoarding", () => {
  it("caps concurrent streams per session and resets streams whose body never comes", async () => {
    const session = http2.connect(app.baseUrl);
    session.on("error", () => undefined);
    await new Promise<void>((resolve) => session.once("remoteSettings", () => resolve()));
    expect(session.remoteSettings.maxConcurrentStreams).toBe(10);
    // A public method's Connect path (login): its body is read before any credentials, so only the limits protect it
    // (a non-public method answers 401 without reading the body).
    const closes: { code: number; ms: number }[] = [];
    const started = performance.now();
    const streams = Array.from({ length: 30 }, () => {
      const stream = session.request({
        ":method": "POST",
        ":path": "/hotelops.auth.v1.AuthService/Login",
        "content-type": "application/json",
      });
      stream.on("error", () => undefined);
      stream.resume();
      return new Promise<void>((resolve) =>
        stream.once(
          "close",
          () => (closes.push({ code: stream.rstCode ?? -1, ms: performance.now() - started }), resolve()),
        ),
      );
    });
    await Promise.race([Promise.all(streams), new Promise((r) => setTimeout(r, 8000))]);
    session.destroy();
    // Every stream ended, none held beyond the request timeout: reset (CANCEL) when its body did not come in time,
    // or refused. Node's client mostly queues what is over the session's limit and sends it as slots free, so how
    // many are refused rather than reset depends on timing.
    expect(closes.length).toBe(30);
    expect(performance.now() - started).toBeLessThan(8000);
    const cancelledAt = closes.filter((c) => c.code === http2.constants.NGHTTP2_CANCEL).map((c) => c.ms);
    const refused = closes.filter((c) => c.code === http2.constants.NGHTTP2_REFUSED_STREAM).length;
    expect(cancelledAt.length + refused).toBe(30);
    expect(cancelledAt.length).toBeGreaterThanOrEqual(10);
    // No more than 10 open at once, each held 1.5 s: the (10k+1)-th reset cannot come before (k+1) x 1.5 s.
    const early = cancelledAt
      .sort((a, b) => a - b)
      .filter((ms, i) => ms < (Math.floor(i / 10) + 1) * 1500 - 20)
      .map(Math.round);
    expect(early).toEqual([]);
  });

  it("REST answers 401 before reading the body of an unauthenticated request and resets the stream", async () => {
    const session = http2.connect(app.baseUrl);
    session.on("error", () => undefined);
    const stream = session.request({
      ":method": "POST",
      ":path": "/api/mobile/v1/reports",
      "content-type": "application/json",
    });
    stream.write("{"); // and never the rest
    stream.on("error", () => undefined);
    const status = await new Promise<number>((resolve) =>
      stream.once("response", (h) => resolve(Number(h[":status"]))),
    );
    let body = "";
    stream.on("data", (d: Buffer) => (body += d.toString()));
    const rst = await new Promise<number>((resolve) => stream.once("close", () => resolve(stream.rstCode)));
    session.destroy();
    expect(status).toBe(401);
    expect(JSON.parse(body)).toMatchObject({ error: { code: "unauthorized" } });
    expect(rst).toBe(http2.constants.NGHTTP2_NO_ERROR);
  });
});
