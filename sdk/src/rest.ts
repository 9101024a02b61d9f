import { tokenProviderOf, type Auth } from "./auth.ts";
import { errorFromResponse } from "./errors.ts";
import { newIdempotencyKey } from "./idempotency.ts";

export interface RestClientOptions {
  baseUrl: string;
  auth?: Auth;
  fetch?: typeof globalThis.fetch;
}

export interface RestRequest {
  query?: Record<string, string | number | boolean | readonly (string | number)[] | undefined>;
  /** JSON body. */
  body?: unknown;
  /** Idempotency-Key of a write; default a fresh one. Reuse the same key when you retry the same write. */
  idempotencyKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface RestResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RestClient {
  request<T = unknown>(method: string, path: string, req?: RestRequest): Promise<RestResponse<T>>;
  get<T = unknown>(path: string, query?: RestRequest["query"]): Promise<T>;
  post<T = unknown>(path: string, body?: unknown, req?: Omit<RestRequest, "body">): Promise<T>;
}

/**
 * The REST faces (`/api/v1`, `/api/mobile/v1`, `/api/panel/v1`) over fetch: Bearer auth with one retry after
 * a refresh on 401, an Idempotency-Key on every write, errors thrown as HotelOpsError. Shapes are in
 * /openapi.json.
 */
export function createRestClient(opts: RestClientOptions): RestClient {
  const doFetch = opts.fetch ?? globalThis.fetch;
  const provider = opts.auth === undefined ? undefined : tokenProviderOf(opts.auth);

  async function request<T>(method: string, path: string, req: RestRequest = {}): Promise<RestResponse<T>> {
    const url = new URL(path, opts.baseUrl);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v));
      else url.searchParams.set(key, String(value));
    }
    const headers = new Headers({ accept: "application/json", ...req.headers });
    if (req.body !== undefined) headers.set("content-type", "application/json");
    if (method !== "GET" && method !== "HEAD" && !headers.has("idempotency-key"))
      headers.set("idempotency-key", req.idempotencyKey ?? newIdempotencyKey());
    const send = async (token: string | undefined): Promise<Response> => {
      if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
      return doFetch(url, {
        method,
        headers,
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        ...(req.signal ? { signal: req.signal } : {}),
      });
    };
    const token = await provider?.accessToken();
    let res = await send(token);
    if (res.status === 401 && token !== undefined && provider?.refresh !== undefined) {
      await res.body?.cancel();
      res = await send(await provider.refresh(token));
    }
    if (!res.ok) throw await errorFromResponse(res);
    const text = res.status === 204 ? "" : await res.text();
    return { status: res.status, headers: res.headers, body: (text === "" ? undefined : JSON.parse(text)) as T };
  }

  return {
    request,
    get: async (path, query) => (await request<never>("GET", path, query === undefined ? {} : { query })).body,
    post: async (path, body, req = {}) =>
      (await request<never>("POST", path, { ...req, ...(body === undefined ? {} : { body }) })).body,
  };
}
