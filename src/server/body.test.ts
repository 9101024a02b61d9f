import http from "node:http";
import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppError } from "../errors.ts";
import { writeError, type NodeResponse } from "../server/http-errors.ts";
import { readMultipart } from "../gateway/multipart.ts";
import { readBody, restRefusals, type NodeRequest } from "./body.ts";

// Body readers behind real sockets: a refusal must reach the client (not a connection reset) and a large
// upload must be cut off, not read to its end.
const LIMIT = 1024;
const UPLOAD = 64 * 1024 * 1024;
let outcomes: Promise<string>[] = [];

async function handler(req: NodeRequest, res: NodeResponse): Promise<void> {
  const read =
    req.url === "/multipart"
      ? readMultipart(req, { maxFileBytes: LIMIT, maxFiles: 2, maxFieldBytes: 64 }).then(
          (r) => `${r.fields.length} fields, ${r.files.map((f) => f.content.length).join("+")} bytes`,
        )
      : readBody(req, LIMIT, restRefusals).then((b) => `${b.length} bytes`);
  outcomes.push(read.catch((err: AppError) => err.code));
  try {
    const result = await read;
    res.statusCode = 200;
    res.end(result);
  } catch (err) {
    writeError(res, err as AppError, "req-1");
  }
}

let h1: http.Server;
let h2: http2.Http2Server;
let base1: string;
let base2: string;
beforeAll(async () => {
  h1 = http.createServer((req, res) => void handler(req, res));
  h2 = http2.createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
  base1 = `http://127.0.0.1:${(h1.address() as AddressInfo).port}`;
  base2 = `http://127.0.0.1:${(h2.address() as AddressInfo).port}`;
});
afterAll(() => {
  h1.closeAllConnections();
  h1.close();
  h2.close();
});

/** A body of `head` then zero bytes up to `size`, produced on demand; `sent()` says how much was pulled. */
function endless(head = "", size = UPLOAD): { body: ReadableStream<Uint8Array>; sent: () => number } {
  let sent = 0;
  const prefix = new TextEncoder().encode(head);
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent === 0 && prefix.length > 0) {
        sent += prefix.length;
        c.enqueue(prefix);
      } else if (sent >= size) c.close();
      else {
        sent += 65536;
        c.enqueue(new Uint8Array(65536));
      }
    },
  });
  return { body, sent: () => sent };
}

const post = (url: string, init: RequestInit) => fetch(url, { method: "POST", duplex: "half", ...init } as RequestInit);

describe("readBody over HTTP/1.1", () => {
  it("reads a body within the limit", async () => {
    const res = await post(`${base1}/json`, { body: "x".repeat(LIMIT) });
    expect(await res.text()).toBe(`${LIMIT} bytes`);
  });

  it("answers 413 to a chunked upload past the limit and cuts it off", async () => {
    const upload = endless();
    const res = await post(`${base1}/json`, { body: upload.body });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    expect(upload.sent()).toBeLessThan(UPLOAD / 2);
  });

  it("answers 413 from the declared Content-Length", async () => {
    const res = await post(`${base1}/json`, { body: new Uint8Array(4 * 1024 * 1024) });
    expect(res.status).toBe(413);
  });

  it("answers a slightly-too-large body cleanly and keeps the connection usable", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await post(`${base1}/json`, { body: "x".repeat(LIMIT + 100) })).status).toBe(413);
      expect((await post(`${base1}/json`, { body: "ok" })).status).toBe(200);
    }
  });

  it("gives up (no hanging handler) when the client goes away mid-body", async () => {
    outcomes = [];
    const socket = net.connect((h1.address() as AddressInfo).port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    socket.write("POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n0123456789");
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(outcomes).toHaveLength(1);
    expect(await Promise.race([outcomes[0], new Promise((r) => setTimeout(() => r("still waiting"), 2000))])).toBe(
      "invalid_argument",
    );
  });
});

describe("readMultipart", () => {
  const boundary = "----gatewaytest";
  const filePart = `--${boundary}\r\nContent-Disposition: form-data; name="images"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;

  it("answers 413 as soon as a file passes its limit and cuts the upload off", async () => {
    const upload = endless(filePart);
    const res = await post(`${base1}/multipart`, {
      body: upload.body,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /a\.png is larger than 1024 bytes/,
    );
    expect(upload.sent()).toBeLessThan(UPLOAD / 2);
  });

  it("refuses a text field or a file one byte over its limit, and one file too many", async () => {
    const form = new FormData();
    form.set("note", "x".repeat(65));
    expect((await post(`${base1}/multipart`, { body: form })).status).toBe(413);
    const big = new FormData();
    big.append("images", new Blob([new Uint8Array(LIMIT + 1)]), "a.png");
    expect((await post(`${base1}/multipart`, { body: big })).status).toBe(413);
    const files = new FormData();
    for (let i = 0; i < 3; i++) files.append("images", new Blob([new Uint8Array(10)]), `${i}.png`);
    expect((await post(`${base1}/multipart`, { body: files })).status).toBe(413);
  });

  it("reads fields and files up to exactly their limits", async () => {
    const form = new FormData();
    form.set("documentType", "x".repeat(64));
    form.append("images", new Blob([new Uint8Array(LIMIT)]), "a.png");
    form.append("images", new Blob([new Uint8Array(1)]), "b.png");
    expect(await (await post(`${base1}/multipart`, { body: form })).text()).toBe(`1 fields, ${LIMIT}+1 bytes`);
  });

  it("refuses a malformed multipart body with 400", async () => {
    const res = await post(`${base1}/multipart`, {
      body: "garbage",
      headers: { "content-type": "multipart/form-data" },
    });
    expect(res.status).toBe(400);
  });
});

describe("readBody over HTTP/2", () => {
  /** Streams `size` bytes on one h2 stream (no content-length); resolves with the status once the stream ends. */
  function h2Upload(size: number): Promise<number> {
    const client = http2.connect(base2);
    return new Promise<number>((resolve, reject) => {
      const stream = client.request({ ":method": "POST", ":path": "/json" });
      let status = 0;
      stream.on("response", (headers) => (status = Number(headers[":status"])));
      stream.on("data", () => {});
      stream.on("close", () => resolve(status));
      stream.on("error", reject);
      let written = 0;
      const write = (): void => {
        while (written < size && !stream.destroyed) {
          const chunk = Math.min(16384, size - written);
          written += chunk;
          if (!stream.write(new Uint8Array(chunk))) {
            stream.once("drain", write);
            return;
          }
        }
        stream.end();
      };
      write();
    }).finally(() => client.close());
  }

  it("answers 413 to a stream past the limit and closes the stream (the client is not left hanging)", async () => {
    expect(await h2Upload(UPLOAD)).toBe(413);
  });

  it("reads a body within the limit", async () => {
    expect(await h2Upload(LIMIT)).toBe(200);
  });
});
