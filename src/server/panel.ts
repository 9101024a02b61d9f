import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { negotiateEncoding, type EncodingName } from "./compression.ts";
import { send } from "./http-errors.ts";
import type { NodeHandler } from "./listen.ts";

/**
 * The panel (`/panel`): the files `npm run build:panel` wrote into panel/dist (run before `npm start` and
 * `npm test`), read once, compressed once (brotli and gzip) and kept in memory. Hashed assets are cached for a
 * year; every other path under /panel is the app's page (client-side routes), revalidated by ETag.
 */

type Req = Parameters<NodeHandler>[0];
type Res = Parameters<NodeHandler>[1];

interface Asset {
  type: string;
  body: Buffer;
  br: Buffer | undefined;
  gzip: Buffer | undefined;
  etag: string;
  cache: string;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
};

// connect-src 'self': the app talks to this origin's API only; nothing else may load
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function asset(body: Buffer, type: string, cache: string): Asset {
  const big = body.length > 1024;
  return {
    type,
    body,
    cache,
    br: big ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }) : undefined,
    gzip: big ? gzipSync(body, { level: 9 }) : undefined,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
  };
}

function load(dist: string): { page: Asset; assets: Map<string, Asset> } | undefined {
  if (!existsSync(join(dist, "index.html"))) return undefined;
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(join(dist, "assets"))) {
    const type = TYPES[name.slice(name.lastIndexOf("."))];
    if (type !== undefined)
      assets.set(
        `/panel/assets/${name}`,
        asset(readFileSync(join(dist, "assets", name)), type, "public, max-age=31536000, immutable"),
      );
  }
  return { page: asset(readFileSync(join(dist, "index.html")), TYPES[".html"]!, "no-cache"), assets };
}

/** Serves /panel from `dist` (default panel/dist); returns a function that answers and returns true for panel paths. */
export function createPanelServer(
  dist = new URL("../../panel/dist", import.meta.url).pathname,
): (req: Req, res: Res, path: string) => boolean {
  let files: ReturnType<typeof load>;
  return (req, res, path) => {
    if (path !== "/panel" && !path.startsWith("/panel/")) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }, "Method not allowed");
      return true;
    }
    files ??= load(dist);
    if (files === undefined) {
      send(
        res,
        503,
        { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
        "The panel is not built: run npm run build:panel",
      );
      return true;
    }
    const found = path.startsWith("/panel/assets/") ? files.assets.get(path) : files.page;
    if (found === undefined) {
      send(res, 404, { "content-type": "text/plain; charset=utf-8" }, "Not found");
      return true;
    }
    const headers: Record<string, string | number> = {
      "content-type": found.type,
      "cache-control": found.cache,
      etag: found.etag,
      vary: "accept-encoding",
      "x-content-type-options": "nosniff",
    };
    if (found === files.page) {
      headers["content-security-policy"] = CSP;
      headers["referrer-policy"] = "no-referrer";
    }
    if (req.headers["if-none-match"] === found.etag) {
      send(res, 304, headers);
      return true;
    }
    const offered: EncodingName[] = found.br !== undefined && found.gzip !== undefined ? ["br", "gzip"] : [];
    const coding = negotiateEncoding(req.headers["accept-encoding"], offered)?.name;
    const body = coding === "br" ? found.br! : coding === "gzip" ? found.gzip! : found.body;
    if (coding !== undefined) headers["content-encoding"] = coding;
    headers["content-length"] = body.length;
    send(res, 200, headers, req.method === "HEAD" ? undefined : body);
    return true;
  };
}
