import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { negotiateEncoding } from "./compression.ts";
import { send } from "./http-errors.ts";
import type { NodeHandler } from "./listen.ts";

/**
 * The API reference: `GET /openapi.json` (the committed openapi/hotelops.v1.json, written by `npm run openapi`)
 * and `GET /docs`, Swagger UI served from the pinned swagger-ui-dist package (no CDN, no outside request).
 */

type Req = Parameters<NodeHandler>[0];
type Res = Parameters<NodeHandler>[1];

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
  etag: string;
  cache: string;
}

const uiDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const uiVersion = (JSON.parse(readFileSync(join(uiDir, "package.json"), "utf8")) as { version: string }).version;
const specPath = new URL("../../openapi/hotelops.v1.json", import.meta.url);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>HotelOps API reference</title>
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
<link rel="stylesheet" href="/docs/swagger-ui.css?v=${uiVersion}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js?v=${uiVersion}"></script>
<script src="/docs/init.js?v=${uiVersion}"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io
const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  docExpansion: "list",
  validatorUrl: null,
  persistAuthorization: false,
});
`;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Path -> how to build the asset (built on first request, then kept). */
const SOURCES: Record<string, () => { type: string; body: Buffer; cache: string }> = {
  "/openapi.json": () => ({ type: "application/json; charset=utf-8", body: readFileSync(specPath), cache: "no-cache" }),
  "/docs": () => ({ type: "text/html; charset=utf-8", body: Buffer.from(PAGE), cache: "no-cache" }),
  "/docs/init.js": () => ({
    type: "text/javascript; charset=utf-8",
    body: Buffer.from(INIT),
    cache: "public, max-age=86400",
  }),
  "/docs/swagger-ui-bundle.js": () => uiFile("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
  "/docs/swagger-ui.css": () => uiFile("swagger-ui.css", "text/css; charset=utf-8"),
  "/docs/favicon-32x32.png": () => uiFile("favicon-32x32.png", "image/png"),
};

function uiFile(name: string, type: string): { type: string; body: Buffer; cache: string } {
  return { type, body: readFileSync(join(uiDir, name)), cache: "public, max-age=86400" };
}

const assets = new Map<string, Asset>();

function assetFor(path: string): Asset | undefined {
  const key = path === "/docs/" || path === "/docs/index.html" ? "/docs" : path;
  let asset = assets.get(key);
  if (asset === undefined) {
    const source = SOURCES[key];
    if (source === undefined) return undefined;
    const { type, body, cache } = source();
    const compressible = !type.startsWith("image/") && body.length > 1024;
    asset = { type, body, cache, gzip: compressible ? gzipSync(body) : undefined, etag: `"${hash(body)}"` };
    assets.set(key, asset);
  }
  return asset;
}

function hash(body: Buffer): string {
  return createHash("sha256").update(body).digest("base64url").slice(0, 22);
}

/** Answers the request and returns true when it is for the docs or the OpenAPI document. */
export function serveDocs(req: Req, res: Res, path: string): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (path !== "/openapi.json" && path !== "/docs" && !path.startsWith("/docs/")) return false;
  const asset = assetFor(path);
  if (asset === undefined) {
    send(res, 404, { "content-type": "text/plain; charset=utf-8" }, "Not found");
    return true;
  }
  const headers: Record<string, string | number> = {
    "content-type": asset.type,
    "cache-control": asset.cache,
    etag: asset.etag,
    vary: "accept-encoding",
    "x-content-type-options": "nosniff",
  };
  if (asset.type.startsWith("text/html")) {
    headers["content-security-policy"] = CSP;
    headers["referrer-policy"] = "no-referrer";
  }
  if (asset.type.startsWith("application/json")) headers["access-control-allow-origin"] = "*";
  if (req.headers["if-none-match"] === asset.etag) {
    send(res, 304, headers);
    return true;
  }
  const gzip = asset.gzip !== undefined && negotiateEncoding(req.headers["accept-encoding"], ["gzip"]) !== undefined;
  const body = gzip ? asset.gzip! : asset.body;
  if (gzip) headers["content-encoding"] = "gzip";
  headers["content-length"] = body.length;
  send(res, 200, headers, req.method === "HEAD" ? undefined : body);
  return true;
}
