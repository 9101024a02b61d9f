import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./http-errors.ts";

// every byte value, small enough to go as a latin1 string, and a body over the limit that goes as a Buffer
const bodies: Record<string, Buffer> = {
  small: Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)),
  large: Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7) % 256)),
  view: Buffer.from([9, 0, 255, 128, 10, 13]).subarray(1, 5),
};
const handler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => {
  const body = bodies[req.url!.slice(1)]!;
  send(res, 200, { "content-type": "application/octet-stream", "content-length": body.byteLength }, body);
};
let h1: http.Server;
let h2: http2.Http2Server;
beforeAll(async () => {
  h1 = http.createServer(handler);
  h2 = http2.createServer(handler);
  await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
});
afterAll(() => {
  h1.close();
  h2.close();
});

describe("send writes binary bodies byte for byte", () => {
  it.each(Object.keys(bodies))("%s, HTTP/1.1 and HTTP/2", async (name) => {
    const port1 = (h1.address() as AddressInfo).port;
    const res = await fetch(`http://127.0.0.1:${port1}/${name}`);
    expect(Buffer.from(await res.arrayBuffer()).equals(bodies[name]!)).toBe(true);
    const session = http2.connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
    const got = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const stream = session.request({ ":path": `/${name}` });
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => resolve(Buffer.concat(chunks)));
      stream.on("error", reject);
    });
    session.close();
    expect(got.equals(bodies[name]!)).toBe(true);
  });
});
