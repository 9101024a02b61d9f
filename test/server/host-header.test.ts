import { afterAll, beforeAll, describe, expect, it } from "vitest";
import net from "node:net";
import { startTestApp, type TestApp } from "../helpers/app.ts";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

/** Sends raw bytes, reads until the server closes or the answer's Content-Length is in. */
function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(app.port, "127.0.0.1");
    let data = "";
    const done = () => {
      const [head = "", body = ""] = data.split("\r\n\r\n", 2);
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]), headers: head.toLowerCase(), body });
      socket.destroy();
    };
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => {
      data += c;
      const length = /content-length: (\d+)/i.exec(data)?.[1];
      const at = data.indexOf("\r\n\r\n");
      if (length !== undefined && at !== -1 && data.length - at - 4 >= Number(length)) done();
    });
    socket.on("end", done);
    socket.on("error", reject);
    socket.write(request);
  });
}

describe("Host header rules (RFC 9112 3.2), with our error body", () => {
  it("refuses two Host headers with 400 and our error body, on REST and Connect paths", async () => {
    for (const request of [
      "GET /api/v1/status HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
      "POST /hotelops.status.v1.StatusService/GetStatus HTTP/1.1\r\nHost: a.example\r\nhost: b.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    ]) {
      const res = await raw(request);
      expect(res.status).toBe(400);
      expect(res.headers).toContain("application/json");
      expect(JSON.parse(res.body)).toMatchObject({
        error: { code: "invalid_argument", requestId: expect.any(String) },
      });
      expect(JSON.parse(res.body).error.message).toContain("Host");
    }
  });

  it("refuses an HTTP/1.1 request without Host with 400 and our error body", async () => {
    const res = await raw("GET /api/v1/status HTTP/1.1\r\n\r\n");
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: "invalid_argument" } });
  });

  it("still answers one Host, and HTTP/1.0 without one", async () => {
    expect((await raw("GET /api/v1/status HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n")).status).toBe(200);
    expect((await raw("GET /api/v1/status HTTP/1.0\r\n\r\n")).status).toBe(200);
  });
});
