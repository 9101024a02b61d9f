/**
 * The readers of the API reference, one tag (section of /docs) each, in the order a newcomer looks for them.
 * An operation belongs to the audience whose path prefix it starts with; the audience decides which
 * credentials "Try it out" sends (security schemes in components.ts).
 */
export interface Audience {
  tag: string;
  prefix: string;
  description: string;
}

export const AUDIENCES: readonly Audience[] = [
  {
    tag: "Partner API",
    prefix: "/api/v1/",
    description:
      "Channel managers, travel agencies and other integrations. Get a token with your client id and secret at `POST /api/v1/oauth/token` (client credentials), then send `Authorization: Bearer <access_token>`. In \"Authorize\", use **clientCredentials** (the page fetches the token) or paste a token into **clientToken**. A client sees only the properties granted to it; any other property code is 404.",
  },
  {
    tag: "Mobile API",
    prefix: "/api/mobile/v1/",
    description:
      "The hotel staff app. Log in with `POST /api/mobile/v1/auth/login` (demo: hotel `DEMO-IST`, `manager@demo.test`, `demo-pass-2026`), then paste `tokens.accessToken` into **staffSession** in \"Authorize\". Every call acts on the session's active property.",
  },
  {
    tag: "Panel",
    prefix: "/api/panel/v1/",
    description: "The web panel of a property (`/panel`): guests, split folios and the city ledger, API access, webhook addresses and notifications. Staff session as in the Mobile API (**staffSession**); each operation needs its own permission (`integrations.manage` for API access and webhooks).",
  },
  {
    tag: "Internal",
    prefix: "/api/admin/v1/",
    description: "Operator functions for internal service accounts: a client with the `admin` scope (**clientCredentials** or **clientToken**).",
  },
];

/** The audience of a REST path, or undefined for a path outside every audience. */
export function audienceOf(path: string): Audience | undefined {
  let best: Audience | undefined;
  for (const a of AUDIENCES) if (path.startsWith(a.prefix) && (best === undefined || a.prefix.length > best.prefix.length)) best = a;
  return best;
}
