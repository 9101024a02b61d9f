import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from "node:zlib";
import { afterEach, expect } from "vitest";
import { createTrafficChecker, type Exchange } from "./openapi-traffic.ts";

/**
 * Every REST exchange the tests make with fetch against a service on this machine is checked against the
 * committed OpenAPI document (openapi-traffic.ts); a test with a mismatch fails in afterEach. Registered in
 * vitest.config.ts as a setup file, so every test file takes part.
 */

const checker = createTrafficChecker();
const problems: string[] = [];
const realFetch = globalThis.fetch;

globalThis.fetch = async function checkedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await realFetch(input, init);
  try {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname !== "127.0.0.1" && url.hostname !== "localhost") return res;
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    if (method === "HEAD" || method === "OPTIONS") return res;
    const requestHeaders = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    const requestBody =
      input instanceof Request && init?.body === undefined
        ? { kind: "unknown" as const }
        : bodyOf(init?.body, requestHeaders);
    const responseText = await res.clone().text();
    const exchange: Exchange = {
      method,
      url,
      requestHeaders,
      requestBody,
      status: res.status,
      responseHeaders: res.headers,
      responseText,
    };
    const found = checker.check(exchange);
    if (found !== undefined) problems.push(...found);
  } catch {
    // a body that cannot be read (aborted, reset) is the test's business, not the document's
  }
  return res;
} as typeof fetch;

function bodyOf(body: RequestInit["body"], headers: Headers): Exchange["requestBody"] {
  if (body === undefined || body === null) return { kind: "none" };
  if (body instanceof URLSearchParams) return { kind: "form", fields: Object.fromEntries(body) };
  if (body instanceof FormData) {
    const fields: Record<string, unknown> = {};
    for (const [name, value] of body) {
      const v = typeof value === "string" ? value : "(file)";
      const prev = fields[name];
      fields[name] =
        prev === undefined ? (name === "images" ? [v] : v) : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    return { kind: "multipart", fields };
  }
  let text: string;
  if (typeof body === "string") text = body;
  else if (body instanceof Uint8Array) {
    const decoded = decode(Buffer.from(body), headers.get("content-encoding"));
    if (decoded === undefined) return { kind: "unknown" };
    text = decoded.toString("utf8");
  } else return { kind: "unknown" };
  const type = (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded")
    return { kind: "form", fields: Object.fromEntries(new URLSearchParams(text)) };
  if (type === "application/json" || type === "") return text === "" ? { kind: "none" } : { kind: "json", text };
  return { kind: "unknown" };
}

/** A body sent with a Content-Encoding as the server reads it; undefined when it cannot be decoded. */
function decode(bytes: Buffer, encoding: string | null): Buffer | undefined {
  try {
    switch ((encoding ?? "identity").trim().toLowerCase()) {
      case "identity":
        return bytes;
      case "gzip":
        return gunzipSync(bytes, { maxOutputLength: 16 * 1024 * 1024 });
      case "br":
        return brotliDecompressSync(bytes, { maxOutputLength: 16 * 1024 * 1024 });
      case "zstd":
        return zstdDecompressSync(bytes, { maxOutputLength: 16 * 1024 * 1024 });
      default:
        return undefined;
    }
  } catch {
    return undefined; // corrupt, or a bomb: the server refuses it, the document has nothing to say
  }
}

afterEach(() => {
  const found = problems.splice(0);
  expect(found, "REST exchanges that differ from openapi/hotelops.v1.json").toEqual([]);
});
