import type { Interceptor } from "@connectrpc/connect";
import type { Deps, Module } from "../module.ts";
import { createMailer } from "../../lib/mail.ts";
import { createLoginService, type LoginService } from "./login.service.ts";
import { createAuthInterceptor } from "./auth.interceptor.ts";
import { registerAuthRpc, authRpcServices } from "./auth.rpc.ts";
import { apiAccessRpcServices, registerApiAccessRpc } from "./api-access.rpc.ts";
import { createClientTokenService, type ClientTokenService } from "./client-token.service.ts";
import { createKeyStore, type KeyStore } from "./keys.ts";
import { createSessionService, type SessionService } from "./sessions.service.ts";
import { createTokenIssuer, type TokenIssuer } from "./tokens.ts";

export { scopes, principalKey, type Principal } from "./principal.ts";
export { holds, requirePrincipal, requireProperty, requireStaff, type PropertyRef } from "./scope.ts";
export { checkPropertyBindings, requestProperty } from "./property-scope.ts";
export { hashSecret, verifySecret, argon2Params } from "./passwords.ts";
export {
  approveClient,
  clientLimitSql,
  clientGrantedSql,
  findClient,
  grantProperties,
  insertClient,
  listClients,
  activeInternalClients,
  lockClientCreation,
  propertiesAtClientCap,
  type ApiClient,
  type ClientKind,
} from "./clients.repository.ts";
export { maskEmail } from "./login.service.ts";

export interface AuthServices {
  keys: KeyStore;
  tokens: TokenIssuer;
  sessions: SessionService;
  clientTokens: ClientTokenService;
  login: LoginService;
}

/** The auth services of one app (one key cache per app), built once by app.ts. */
export function createAuthServices(
  deps: Pick<Deps, "config" | "db" | "transact" | "clock">,
  platform: { partnerApiEnabled: () => Promise<boolean> },
): AuthServices {
  const keys = createKeyStore(deps.db.pool, deps.clock);
  const tokens = createTokenIssuer(keys, deps.clock);
  const sessions = createSessionService({
    transact: deps.transact,
    clock: deps.clock,
    tokens,
    refreshGraceMs: deps.config.refreshGraceSeconds * 1000,
  });
  const login = createLoginService({
    db: deps.db,
    transact: deps.transact,
    clock: deps.clock,
    sessions,
    mailer: createMailer(deps.config),
  });
  return {
    keys,
    tokens,
    sessions,
    clientTokens: createClientTokenService({
      pool: deps.db.pool,
      tokens,
      clock: deps.clock,
      partnerApiEnabled: platform.partnerApiEnabled,
    }),
    login,
  };
}

/** Authentication of every call, for every protocol; app.ts places it in the interceptor chain. */
export function createAuthInterceptorOf(deps: Pick<Deps, "db" | "clock">, auth: AuthServices): Interceptor {
  return createAuthInterceptor({ pool: deps.db.pool, tokens: auth.tokens, clock: deps.clock });
}

/** The OAuth token endpoint and the mobile login RPCs. */
export function createAuthModule(deps: Pick<Deps, "db">, auth: AuthServices): Module {
  return {
    name: "auth",
    services: [...authRpcServices, ...apiAccessRpcServices],
    registerRpc: (router) => {
      registerAuthRpc(router, auth.clientTokens, auth.login);
      registerApiAccessRpc(router, deps.db.pool);
    },
  };
}
