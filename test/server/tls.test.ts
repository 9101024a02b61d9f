import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import https from "node:https";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";

let app: TestApp;
let dir: string;
let ca: Buffer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hotelops-tls-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  ca = readFileSync(join(dir, "cert.pem"));
  app = await startTestApp({ env: { TLS_CERT_FILE: join(dir, "cert.pem"), TLS_KEY_FILE: join(dir, "key.pem") } });
});
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("TLS with ALPN on the same port", () => {
  it("serves REST over HTTPS/1.1", async () => {
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get({ host: "127.0.0.1", port: app.port, path: "/api/v1/status", ca, servername: "localhost" }, (res) => {
          let data = "";
          res.on("data", (c: Buffer) => (data += c.toString()));
          res.on("end", () => resolve(data));
        })
        .on("error", reject);
    });
    expect(JSON.parse(body)).toMatchObject({ status: "operational" });
  });

  it("serves REST over h2 negotiated by ALPN", async () => {
    const session = http2.connect(`https://localhost:${app.port}`, { ca });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ":path": "/api/v1/status" });
        let data = "";
        req.on("data", (c: Buffer) => (data += c.toString()));
        req.on("end", () => resolve(data));
        req.on("error", reject);
      });
      expect(session.alpnProtocol).toBe("h2");
      expect(JSON.parse(body)).toMatchObject({ apiVersion: "v1" });
    } finally {
      session.close();
    }
  });
});
