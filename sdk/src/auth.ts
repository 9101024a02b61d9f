import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * Where an access token comes from. `refresh(stale)` (optional) replaces a token the server refused; it gets
 * the refused token so that a caller that lost a race does not refresh a second time.
 */
export interface TokenProvider {
  accessToken(): Promise<string>;
  refresh?(staleAccessToken: string): Promise<string>;
}

/** A fixed token, a function returning one, or a provider (mobile session, client credentials). */
export type Auth = string | (() => string | Promise<string>) | TokenProvider;

export function tokenProviderOf(auth: Auth): TokenProvider {
  if (typeof auth === "string") return { accessToken: () => Promise.resolve(auth) };
  if (typeof auth === "function") return { accessToken: async () => auth() };
  return auth;
}

/**
 * Sends `authorization: Bearer <token>`. When the server answers Unauthenticated and the provider can refresh,
 * the call is retried once with the refreshed token (the request message is still in memory).
 */
export function bearerInterceptor(auth: Auth): Interceptor {
  const provider = tokenProviderOf(auth);
  return (next) => async (req) => {
    const token = await provider.accessToken();
    req.header.set("authorization", `Bearer ${token}`);
    try {
      return await next(req);
    } catch (err) {
      if (provider.refresh === undefined || req.stream || ConnectError.from(err).code !== Code.Unauthenticated)
        throw err;
      const fresh = await provider.refresh(token);
      req.header.set("authorization", `Bearer ${fresh}`);
      return await next(req);
    }
  };
}
