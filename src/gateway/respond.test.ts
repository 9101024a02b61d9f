import { Writable } from "node:stream";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import type { NodeResponse } from "../server/http-errors.ts";
import type { NodeRequest } from "../server/body.ts";
import { sendJson } from "./respond.ts";

/** A client that takes one write at a time, when the test says so. */
class SlowClient extends Writable {
  statusCode = 0;
  headers: Record<string, string> = {};
  received: Buffer[] = [];
  private waiting: (() => void)[] = [];
  constructor() {
    super({ highWaterMark: 1 });
  }
  setHeader(name: string, value: string): void {
    this.headers[name] = value;
  }
  getHeader(name: string): string | undefined {
    return this.headers[name];
  }
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.received.push(chunk);
    this.waiting.push(callback);
  }
  /** Lets the oldest write finish; resolves after the writer had a chance to react. */
  async take(): Promise<void> {
    this.waiting.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  get body(): string {
    return Buffer.concat(this.received).toString("utf8");
  }
}

/** `n` pieces of text, counting how many were asked for; `failAt` throws instead of that piece. */
function counted(n: number, failAt = -1) {
  const state = { pulled: 0 };
  function* pieces(): Generator<string, void> {
    for (let i = 0; i < n; i++) {
      if (i === failAt) throw new Error("cannot render");
      state.pulled++;
      yield `${String(i).padStart(4, "0")}`.repeat(20_000);
    }
  }
  return {
    state,
    pieces: pieces(),
    text: Array.from({ length: n }, (_, i) => `${String(i).padStart(4, "0")}`.repeat(20_000)).join(""),
  };
}

const request = (method: string, acceptEncoding?: string) =>
  ({ method, headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } }) as NodeRequest;
const send = (client: SlowClient, req: NodeRequest, pieces: Iterator<string, void>) =>
  sendJson(req, client as unknown as NodeResponse, 200, {}, pieces);

describe("sendJson", () => {
  it("renders a long answer only as fast as the client takes it, without a Content-Length", async () => {
    const client = new SlowClient();
    const { state, pieces, text } = counted(12);
    const done = send(client, request("GET"), pieces);
    for (let taken = 0; taken < 12; taken++) {
      await new Promise((r) => setImmediate(r));
      // the piece being written, one queued behind it at most
      expect(state.pulled).toBeLessThanOrEqual(taken + 2);
      await client.take();
    }
    await done;
    expect(client.headers["content-length"]).toBeUndefined();
    expect(client.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(client.body).toBe(text);
  });

  it("streams a long answer through the negotiated compressor", async () => {
    const client = new SlowClient();
    const { pieces, text } = counted(6);
    const done = send(client, request("GET", "gzip"), pieces);
    const taking = setInterval(() => void client.take(), 1);
    try {
      await done;
      await new Promise((r) => client.once("finish", r));
    } finally {
      clearInterval(taking);
    }
    expect(client.headers["content-encoding"]).toBe("gzip");
    expect(client.headers.vary).toBe("Accept-Encoding");
    expect(zlib.gunzipSync(Buffer.concat(client.received)).toString("utf8")).toBe(text);
  });

  it("stops rendering when the client goes away", async () => {
    const client = new SlowClient();
    const { state, pieces } = counted(12);
    const done = send(client, request("GET"), pieces);
    await client.take();
    client.destroy();
    await done;
    expect(state.pulled).toBeLessThanOrEqual(3);
  });

  it("resets the response when a piece fails after the answer started", async () => {
    const client = new SlowClient();
    const { pieces } = counted(12, 4);
    const done = send(client, request("GET"), pieces);
    const taking = setInterval(() => void client.take(), 1);
    try {
      await expect(done).rejects.toThrow("cannot render");
    } finally {
      clearInterval(taking);
    }
    expect(client.destroyed).toBe(true);
    expect(client.writableFinished).toBe(false);
  });

  it("answers HEAD with the Content-Length of the whole plain answer and no body", async () => {
    const client = new SlowClient();
    const { pieces, text } = counted(5);
    await send(client, request("HEAD", "gzip"), pieces);
    expect(client.headers["content-length"]).toBe(String(text.length));
    expect(client.headers["content-encoding"]).toBeUndefined();
    expect(client.received).toEqual([]);
  });

  it("writes an answer of one piece whole, with a Content-Length", async () => {
    const client = new SlowClient();
    const done = send(client, request("GET"), ["{}"].values());
    await client.take();
    await done;
    expect(client.headers["content-length"]).toBe("2");
    expect(client.body).toBe("{}");
  });
});
