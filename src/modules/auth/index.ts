import type { Kysely } from "kysely";
import type { Deps, Module } from "../module.ts";
import { createMailer } from "../../lib/mail.ts";
import { createLoginService } from "./login.service.ts";
import { createAuthInterceptor } from "./auth.interceptor.ts";
import { registerAuthRpc, authRpcServices } from "./auth.rpc.ts";
import { apiAccessRpcServices, registerApiAccessRpc } from "./api-access.rpc.ts";
import { createClientTokenService, type ClientTokenService } from "./client-token.service.ts";
import { createKeyStore, type KeyStore } from "./keys.ts";
import { createSessionService, type SessionService } from "./sessions.service.ts";
import { createTokenIssuer, type TokenIssuer } from "./tokens.ts";

export { permissions, scopes, principalKey, type Permission, type Principal, type Scope } from "./principal.ts";
export { holds, requirePrincipal, requireProperty, requireStaff, requirePermission, requireScope, propertyIdsOf, type PropertyRef } from "./scope.ts";
export { hashSecret, verifySecret, burnVerify, argon2Params } from "./passwords.ts";
export { ACCESS_TOKEN_TTL_SECONDS, type AccessClaims, type TokenIssuer } from "./tokens.ts";
export { SESSION_TTL_MS, hashRefreshToken, type OpenSessionInput, type SessionService, type StaffTokens } from "./sessions.service.ts";
export { oauthError, type ClientTokenService, type TokenRequest, type TokenResponse } from "./client-token.service.ts";
export { approveClient, findClient, grantProperties, insertClient, listClients, type ApiClient, type ClientKind } from "./clients.repository.ts";
export type { KeyStore } from "./keys.ts";
export { maskEmail, type LoginService, type Profile } from "./login.service.ts";

export interface AuthServices {
  keys: KeyStore;
  tokens: TokenIssuer;
  sessions: SessionService;
  clientTokens: ClientTokenService;
}

const byDeps = new WeakMap<Deps, AuthServices>();

/**
 * The auth services of one app (one key cache per app). Other modules (mobile login) and test helpers call
 * `authServicesOf(deps).sessions.openStaffSession(...)`.
 */
export function authServicesOf(deps: Pick<Deps, "db" | "transact" | "clock"> & object): AuthServices {
  let services = byDeps.get(deps as Deps);
  if (services === undefined) {
    const keys = createKeyStore(deps.db.pool, deps.clock);
    const tokens = createTokenIssuer(keys, deps.clock);
    services = {
      keys,
      tokens,
      sessions: createSessionService({ transact: deps.transact, clock: deps.clock, tokens }),
      clientTokens: createClientTokenService({ pool: deps.db.pool, tokens, clock: deps.clock }),
    };
    byDeps.set(deps as Deps, services);
  }
  return services;
}

/** Authentication for every protocol (the interceptor) and the OAuth token endpoint. */
export function createAuthModule(deps: Deps): Module {
  const auth = authServicesOf(deps);
  const login = createLoginService({
    db: deps.db.orm.em.getKysely() as unknown as Kysely<unknown>,
    pool: deps.db.pool,
    transact: deps.transact,
    clock: deps.clock,
    sessions: auth.sessions,
    mailer: createMailer(deps.config),
  });
  return {
    name: "auth",
    services: [...authRpcServices, ...apiAccessRpcServices],
    registerRpc: (router) => {
      registerAuthRpc(router, auth.clientTokens, login);
      registerApiAccessRpc(router, deps.db.pool);
    },
    interceptors: [createAuthInterceptor({ pool: deps.db.pool, tokens: auth.tokens, clock: deps.clock })],
  };
}
