import { randomBytes, randomFillSync } from "node:crypto";
import { AppError } from "../errors.ts";

// Entropy is drawn 4 KiB at a time: one syscall per 256 ids instead of one per id.
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** Ids are UUIDv7-like: time-ordered, so primary keys stay index friendly. One helper for every id. */
export function newId(now: number = Date.now()): string {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  // the id's 16 bytes are written where they lie in the pool: each is used once
  const at = offset;
  offset += 16;
  pool.writeUIntBE(now, at, 6);
  pool[at + 6] = (pool[at + 6]! & 0x0f) | 0x70;
  pool[at + 8] = (pool[at + 8]! & 0x3f) | 0x80;
  const hex = pool.toString("hex", at, at + 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/** A random token with a prefix, e.g. secrets (`whsec_...`) and opaque refresh tokens. */
export function newToken(prefix = "", bytes = 32): string {
  return prefix + randomBytes(bytes).toString("base64url");
}

/** Ids arrive as text; a malformed id cannot name a record, so it is 404 like any unknown id. */
export function requireId(value: string, what: string): string {
  if (!isUuid(value)) throw new AppError("not_found", `${what} not found.`);
  return value;
}
