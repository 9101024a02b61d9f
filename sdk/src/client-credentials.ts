import type { TokenProvider } from "./auth.ts";
import { errorFromResponse, HotelOpsError } from "./errors.ts";

export interface ClientCredentialsOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes to ask for; omitted: every scope of the client. */
  scope?: string;
  /** Fetch a new token this many seconds before the old one expires (default 60, at most a tenth of its life). */
  refreshBeforeSeconds?: number;
  fetch?: typeof globalThis.fetch;
  now?: () => number;
}

export interface ClientCredentials extends TokenProvider {
  /** Replaces a refused token (once for all callers that present the same one). */
  refresh(staleAccessToken: string): Promise<string>;
  /** The granted scopes of the current token (after the first fetch). */
  scopes(): string[];
}

/** RFC 6749 section 2.3.1: client id and secret are form-urlencoded before they go into HTTP Basic. */
function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, "+");
}

/**
 * Partner and internal client tokens from `POST /api/v1/oauth/token` (client credentials, form body, HTTP
 * Basic), cached until shortly before they expire; concurrent callers share one token request.
 */
export function createClientCredentials(opts: ClientCredentialsOptions): ClientCredentials {
  const doFetch = opts.fetch ?? globalThis.fetch;
  const now = opts.now ?? Date.now;
  let cached: { token: string; renewAt: number; scopes: string[] } | undefined;
  let inflight: Promise<string> | undefined;

  async function fetchToken(): Promise<string> {
    const form = new URLSearchParams({ grant_type: "client_credentials" });
    if (opts.scope !== undefined) form.set("scope", opts.scope);
    const basic = btoa(`${formEncode(opts.clientId)}:${formEncode(opts.clientSecret)}`);
    const res = await doFetch(new URL("/api/v1/oauth/token", opts.baseUrl), {
      method: "POST",
      headers: {
        authorization: `Basic ${basic}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: form.toString(),
    });
    if (!res.ok) throw await errorFromResponse(res);
    const body = (await res.json()) as { access_token?: unknown; expires_in?: unknown; scope?: unknown };
    if (typeof body.access_token !== "string" || typeof body.expires_in !== "number") {
      throw new HotelOpsError({
        status: res.status,
        code: "invalid_response",
        message: "The token answer carries no access_token.",
      });
    }
    const lifeMs = body.expires_in * 1000;
    const earlyMs = Math.min((opts.refreshBeforeSeconds ?? 60) * 1000, lifeMs / 10);
    cached = {
      token: body.access_token,
      renewAt: now() + lifeMs - earlyMs,
      scopes: typeof body.scope === "string" ? body.scope.split(" ").filter(Boolean) : [],
    };
    return body.access_token;
  }

  function once(): Promise<string> {
    inflight ??= fetchToken().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  return {
    async accessToken() {
      if (inflight !== undefined) return inflight;
      if (cached !== undefined && now() < cached.renewAt) return cached.token;
      return once();
    },
    async refresh(stale) {
      if (inflight !== undefined) return inflight;
      if (cached !== undefined && cached.token !== stale && now() < cached.renewAt) return cached.token;
      cached = undefined;
      return once();
    },
    scopes: () => cached?.scopes ?? [],
  };
}
