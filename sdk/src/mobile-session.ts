import type { TokenProvider } from "./auth.ts";
import { HotelOpsError, errorFromResponse } from "./errors.ts";

/** The token pair of a staff session, as login, verify and refresh return it. */
export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds the access token lives (900). */
  expiresIn: number;
}

/** The pair as the session keeps it: replaced as one object, never field by field. */
export interface StoredTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** Epoch milliseconds after which the access token is refreshed before use. */
  readonly refreshAt: number;
}

/** The signed-in user and the properties they may enter, as login, verify and switchProperty answer it. */
export interface StaffProfile {
  userId: string;
  activePropertyId: string;
  properties: { id: string; code: string; name: string; permissions: string[] }[];
}

export interface MobileSessionOptions {
  baseUrl: string;
  tokens: SessionTokens | StoredTokens;
  /** Called with every new pair before any caller uses it (persist it here, e.g. in the keychain). */
  onTokens?: (tokens: StoredTokens) => void | Promise<void>;
  /** Called once when the server ends the session (refresh refused): log the user out. */
  onSessionEnded?: () => void;
  /** Refresh this many seconds before expiry (default 60). */
  refreshBeforeSeconds?: number;
  /**
   * The `deviceId` the session was opened with (loginStaff and verifyStaffLogin pass theirs on), sent with every
   * refresh: only with it does a refresh retried after a lost answer get the same new pair from the server (within
   * its grace window, 30 s by default) instead of ending the session as a reused refresh token.
   */
  deviceId?: string;
  fetch?: typeof globalThis.fetch;
  now?: () => number;
}

export interface MobileSession extends TokenProvider {
  /** Replaces a refused token (once for all callers that present the same one). */
  refresh(staleAccessToken: string): Promise<string>;
  /** The current pair (undefined once the session ended). */
  tokens(): StoredTokens | undefined;
  /**
   * Makes another property the session's active one (`POST /api/mobile/v1/session/active-property`) and keeps the
   * re-issued pair; answers the new profile. Runs as the one exchange in flight, like a refresh: both spend the
   * refresh token. A refusal (404 for a property the user cannot enter) leaves the current pair in place.
   */
  switchProperty(propertyId: string): Promise<StaffProfile>;
  /** Ends the session on the server (`POST /api/mobile/v1/auth/logout`) and forgets the pair. */
  logout(): Promise<void>;
  /** Forget the pair locally only. */
  clear(): void;
}

/** The refresh endpoint refused the refresh token: the session is over (expired, revoked or reused). */
export class SessionEndedError extends HotelOpsError {}

/**
 * A staff session that refreshes the way the API asks of clients: the refresh token rotates on every refresh
 * and presenting a spent one revokes the whole session, so at most one refresh is in flight; concurrent
 * callers wait for that same refresh; the new pair replaces the old one in one step; a caller whose token was
 * refused after someone else already refreshed simply takes the new token instead of refreshing again.
 */
export function createMobileSession(opts: MobileSessionOptions): MobileSession {
  const doFetch = opts.fetch ?? globalThis.fetch;
  const now = opts.now ?? Date.now;
  const skewMs = (opts.refreshBeforeSeconds ?? 60) * 1000;
  const stored = (t: SessionTokens | StoredTokens): StoredTokens =>
    "refreshAt" in t
      ? t
      : {
          accessToken: t.accessToken,
          refreshToken: t.refreshToken,
          refreshAt: now() + Math.max(0, t.expiresIn * 1000 - skewMs),
        };
  let current: StoredTokens | undefined = stored(opts.tokens);
  let inflight: Promise<StoredTokens> | undefined;

  const ended = (): SessionEndedError =>
    new SessionEndedError({ status: 401, code: "unauthorized", message: "The session has ended; log in again." });

  /** Keeps a pair the server just issued (the previous refresh token is spent now, even if persisting fails). */
  async function keep(res: Response): Promise<{ next: StoredTokens; profile: StaffProfile }> {
    const body = (await res.json()) as { tokens?: Partial<SessionTokens> | null; profile?: StaffProfile };
    const t = body.tokens;
    if (
      t == null ||
      typeof t.accessToken !== "string" ||
      typeof t.refreshToken !== "string" ||
      typeof t.expiresIn !== "number"
    ) {
      throw new HotelOpsError({
        status: res.status,
        code: "invalid_response",
        message: "The answer carries no token pair.",
      });
    }
    const next = stored({ accessToken: t.accessToken, refreshToken: t.refreshToken, expiresIn: t.expiresIn });
    current = next;
    await opts.onTokens?.(next);
    return { next, profile: body.profile as StaffProfile };
  }

  async function exchange(from: StoredTokens): Promise<StoredTokens> {
    const res = await doFetch(new URL("/api/mobile/v1/auth/refresh", opts.baseUrl), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(
        opts.deviceId === undefined
          ? { refreshToken: from.refreshToken }
          : { refreshToken: from.refreshToken, deviceId: opts.deviceId },
      ),
    });
    if (res.status === 401 || res.status === 400 || res.status === 403) {
      // the pair is dead for everyone; a network error or 5xx instead keeps it for a later retry
      if (current === from) {
        current = undefined;
        opts.onSessionEnded?.();
      }
      const err = await errorFromResponse(res);
      throw new SessionEndedError({
        status: err.status,
        code: err.code,
        message: err.message,
        requestId: err.requestId,
      });
    }
    if (!res.ok) throw await errorFromResponse(res);
    return (await keep(res)).next;
  }

  function refreshOnce(): Promise<StoredTokens> {
    if (inflight !== undefined) return inflight;
    const from = current;
    if (from === undefined) return Promise.reject(ended());
    inflight = exchange(from).finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  return {
    async accessToken() {
      if (inflight !== undefined) return (await inflight).accessToken;
      if (current === undefined) throw ended();
      if (now() < current.refreshAt) return current.accessToken;
      return (await refreshOnce()).accessToken;
    },
    async refresh(stale) {
      if (inflight !== undefined) return (await inflight).accessToken;
      if (current === undefined) throw ended();
      // someone already replaced the refused token: use theirs
      if (current.accessToken !== stale) return current.accessToken;
      return (await refreshOnce()).accessToken;
    },
    async switchProperty(propertyId) {
      while (inflight !== undefined) await inflight.catch(() => undefined);
      if (current === undefined) throw ended();
      let from = current;
      if (now() >= from.refreshAt) from = await refreshOnce();
      const task = (async () => {
        const res = await doFetch(new URL("/api/mobile/v1/session/active-property", opts.baseUrl), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json",
            authorization: `Bearer ${from.accessToken}`,
          },
          body: JSON.stringify({ propertyId }),
        });
        if (!res.ok) throw await errorFromResponse(res);
        return keep(res);
      })();
      inflight = task
        .then(
          (r) => r.next,
          () => from,
        )
        .finally(() => {
          inflight = undefined;
        });
      return (await task).profile;
    },
    tokens: () => current,
    async logout() {
      while (inflight !== undefined) await inflight.catch(() => undefined);
      // an expired access token cannot log out: refresh first (a refused refresh means it is over already)
      const from =
        current !== undefined && now() >= current.refreshAt ? await refreshOnce().catch(() => undefined) : current;
      current = undefined;
      if (from === undefined) return;
      const res = await doFetch(new URL("/api/mobile/v1/auth/logout", opts.baseUrl), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          authorization: `Bearer ${from.accessToken}`,
        },
        body: "{}",
      });
      // 401: the session was already over
      if (!res.ok && res.status !== 401) throw await errorFromResponse(res);
      await res.body?.cancel();
    },
    clear() {
      current = undefined;
    },
  };
}
