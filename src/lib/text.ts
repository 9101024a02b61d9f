import { invalidField, type AppError } from "../errors.ts";

/** True for text PostgreSQL cannot store (NUL) or that is not valid Unicode (an unpaired surrogate). */
export function isUnstorableText(s: string): boolean {
  return s.includes("\0") || !s.isWellFormed();
}

/**
 * The first string in a request message (fields, repeated fields, map keys and values, nested messages,
 * google.protobuf.Struct values) that isUnstorableText, as a 400 invalid_argument naming its field; checked
 * once for every face (REST, Connect, gRPC-Web, gRPC) by the call interceptor, before any RPC runs.
 */
export function unstorableTextIn(message: unknown): AppError | undefined {
  const path = find(message, "", 0);
  return path === undefined
    ? undefined
    : invalidField(path === "" ? "request" : path, "contains a NUL character or an unpaired surrogate");
}

function find(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === "string") return isUnstorableText(value) ? path : undefined;
  if (value === null || typeof value !== "object" || depth > 64 || value instanceof Uint8Array) return undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = find(v, `${path}[${i}]`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    if (key === "$typeName" || key === "$unknown") continue;
    const at = path === "" ? key : `${path}.${key}`;
    if (isUnstorableText(key)) return at;
    const found = find(v, at, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
