import { runQuery, type Statement } from "../../db/queryable.ts";
import { getOption, type DescMethod } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import type pg from "pg";
import { PrincipalKind, rule as ruleOption } from "../../../gen/hotelops/auth/v1/rule_pb.js";
import { AppError } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid } from "../../lib/ids.ts";
import { staffPermissionsSql } from "../properties/index.ts";
import { clientCredentials, type ClientCredentials } from "./clients.repository.ts";
import { principalKey, type Principal } from "./principal.ts";
import type { TokenIssuer } from "./tokens.ts";
import { scoped } from "../../server/calls.ts";
import { callInfoKey } from "../../server/context.ts";
import { runAs } from "../../lib/change-context.ts";
import { bindingOf, bindProperty, type Binding } from "./property-scope.ts";

interface Rule {
  public: boolean;
  permission: string;
  scope: string;
  staff: boolean;
  partner: boolean;
  internal: boolean;
  /** How the call is bound to a property (property-scope.ts); checked for every method when the server starts. */
  binding: Binding;
}

const PUBLIC: Rule = {
  public: true,
  permission: "",
  scope: "",
  staff: false,
  partner: false,
  internal: false,
  binding: "none",
};

/**
 * The hotelops.auth.v1.rule of a method. Services outside `hotelops.*` (gRPC health and reflection) are
 * infrastructure and stay public; a hotelops method without a rule needs a staff session or internal client.
 */
function ruleOf(method: DescMethod): Rule {
  if (!method.parent.typeName.startsWith("hotelops.")) return PUBLIC;
  const r = getOption(method, ruleOption);
  if (r.public) return PUBLIC;
  const kinds = new Set(r.principals.length > 0 ? r.principals : [PrincipalKind.STAFF, PrincipalKind.INTERNAL]);
  const binding = bindingOf(method);
  if (typeof binding !== "string") throw new Error(binding.error);
  return {
    binding,
    public: false,
    permission: r.permission,
    scope: r.scope,
    staff: kinds.has(PrincipalKind.STAFF),
    partner: kinds.has(PrincipalKind.PARTNER),
    internal: kinds.has(PrincipalKind.INTERNAL),
  };
}

// The session and the permissions of its user's role in its property (null unless the user, the membership and
// the property are all active): one indexed statement per request.
const staffSession: Statement = {
  name: "auth_staff_session",
  text: `select s.user_id as "userId", s.property_id as "propertyId",
    ${staffPermissionsSql("s.user_id", "s.property_id")} as permissions
  from staff_sessions s
  where s.id = $1 and s.revoked_at is null and s.expires_at > $2`,
};

function unauthorized(message: string, invalidToken: boolean): AppError {
  return new AppError("unauthorized", message, {
    headers: { "www-authenticate": invalidToken ? 'Bearer error="invalid_token"' : "Bearer" },
  });
}

/**
 * The one authentication and authorization step for REST, Connect, gRPC-Web and gRPC: reads the method's
 * AuthRule, verifies the Bearer JWT, then loads the caller with one indexed query per request (staff: the
 * session with its membership and role, so revocation, a disabled user or a changed role act at once;
 * clients: the client and its active properties), enforces the rule and puts the Principal in the context, and
 * resolves the property a request names against the caller's reach (property-scope.ts).
 */
export function createAuthInterceptor(deps: { pool: pg.Pool; tokens: TokenIssuer; clock: Clock }): Interceptor {
  const rules = new WeakMap<DescMethod, Rule>();

  async function principalOf(authorization: string | null): Promise<Principal> {
    if (authorization === null || authorization === "")
      throw unauthorized("Authentication required: send Authorization: Bearer <access token>.", false);
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization);
    if (match === null) throw unauthorized("Authorization must be a Bearer access token.", false);
    const claims = await deps.tokens.verify(match[1]!);
    if (claims === undefined) throw unauthorized("The access token is invalid or expired.", true);

    if (claims.kind === "staff") {
      if (!isUuid(claims.sid)) throw unauthorized("The access token is invalid or expired.", true);
      const { rows } = await runQuery<{ userId: string; propertyId: string; permissions: string[] | null }>(
        deps.pool,
        staffSession,
        [claims.sid, deps.clock.now()],
      );
      const s = rows[0];
      if (s === undefined || s.permissions === null || s.userId !== claims.sub)
        throw unauthorized("The session has ended; sign in again.", true);
      if (s.propertyId !== claims.pid)
        throw unauthorized(
          "The session's active property has changed; use the access token issued with the switch.",
          true,
        );
      return {
        kind: "staff",
        userId: s.userId,
        sessionId: claims.sid,
        activePropertyId: s.propertyId,
        propertyIds: [s.propertyId],
        permissions: new Set(s.permissions),
      };
    }
    const { rows } = await runQuery<ClientCredentials>(deps.pool, clientCredentials, [claims.sub]);
    const c = rows[0];
    if (c === undefined || !c.active || c.kind !== claims.kind) throw unauthorized("The client is disabled.", true);
    // The token's scope, narrowed to what the client still holds: removing a scope acts at once.
    const scopes = new Set(claims.scope.split(" ").filter((s) => s !== "" && c.scopes.includes(s)));
    return {
      kind: c.kind,
      clientId: c.id,
      provider: c.provider,
      environment: c.environment,
      propertyIds: c.propertyIds,
      scopes,
    };
  }

  const ruleFor = (method: DescMethod): Rule => {
    let rule = rules.get(method);
    if (rule === undefined) rules.set(method, (rule = ruleOf(method)));
    return rule;
  };
  const interceptor: Interceptor = (next) => async (req) => {
    const rule = ruleFor(req.method);

    const principal = await principalOf(req.header.get("authorization"));
    const allowed =
      principal.kind === "staff" ? rule.staff : principal.kind === "partner" ? rule.partner : rule.internal;
    if (!allowed)
      throw new AppError(
        "forbidden",
        `This operation is not available to ${principal.kind === "staff" ? "staff sessions" : `${principal.kind} clients`}.`,
      );
    if (principal.kind === "staff") {
      if (rule.permission !== "" && !principal.permissions.has(rule.permission)) {
        throw new AppError("forbidden", `Missing permission ${rule.permission} in the active property.`);
      }
    } else if (rule.scope !== "" && !principal.scopes.has(rule.scope)) {
      throw new AppError("forbidden", `The access token lacks the scope ${rule.scope}.`, {
        headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${rule.scope}"` },
      });
    }
    req.contextValues.set(principalKey, principal);
    // Property isolation: the property the request names must be in the caller's reach (404 otherwise).
    if (rule.binding === "request") {
      if (!req.stream) await bindProperty(deps.pool, principal, req.message, req.contextValues);
      else if (req.method.methodKind === "server_streaming") {
        // the one request message of a server stream, read here and handed on unchanged
        const first = await firstOf(req.message);
        await bindProperty(deps.pool, principal, first, req.contextValues);
        req = { ...req, message: once(first) };
      } else throw new Error(`${req.method.name}: a client stream cannot name its property in property_code`);
    }
    // The author of whatever this call changes (the audit trail reads it where a change is recorded).
    const info = req.contextValues.get(callInfoKey);
    return runAs(
      {
        kind: principal.kind === "staff" ? "user" : principal.kind === "internal" ? "client" : "partner",
        id: principal.kind === "staff" ? principal.userId : principal.clientId,
        face: info?.transport ?? "connect",
        requestId: info?.requestId ?? "",
      },
      () => next(req),
    );
  };
  return scoped((method) => !ruleFor(method).public, interceptor);
}

async function firstOf<T>(messages: AsyncIterable<T>): Promise<T> {
  for await (const m of messages) return m;
  throw new AppError("invalid_argument", "The request message is missing.");
}

async function* once<T>(message: T): AsyncGenerator<T> {
  yield message;
}
