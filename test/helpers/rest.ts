import { newId } from "../../src/lib/ids.ts";
import { bearer } from "./auth.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
type Json = any;

/**
 * A REST caller for a test app started in `beforeAll` (`baseUrl` is read at each call): JSON in and out, the
 * caller's bearer token, an idempotency key on every request with a body; an empty answer reads as `{}`.
 */
export function restCaller(baseUrl: () => string) {
  return async (
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: {
        ...bearer(token),
        ...(body !== undefined ? { "content-type": "application/json", "idempotency-key": newId() } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Json) };
  };
}
