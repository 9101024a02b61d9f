// What every entry point exports (browser and Node alike).
export * from "./services.ts";
export { bearerInterceptor, tokenProviderOf, type Auth, type TokenProvider } from "./auth.ts";
export { idempotencyInterceptor, isWrite, newIdempotencyKey } from "./idempotency.ts";
export {
  createMobileSession,
  SessionEndedError,
  type MobileSession,
  type MobileSessionOptions,
  type SessionTokens,
  type StaffProfile,
  type StoredTokens,
} from "./mobile-session.ts";
export {
  loginStaff,
  verifyStaffLogin,
  type LoginChallenge,
  type StaffLoginRequest,
  type StaffLoginResult,
  type StaffSessionOptions,
  type StaffSignIn,
} from "./staff-login.ts";
export {
  createClientCredentials,
  type ClientCredentials,
  type ClientCredentialsOptions,
} from "./client-credentials.ts";
export {
  createRestClient,
  type RestClient,
  type RestClientOptions,
  type RestRequest,
  type RestResponse,
} from "./rest.ts";
export { HotelOpsError, type ErrorDetail } from "./errors.ts";
export type { HotelOpsClientOptions, TransportKind } from "./options.ts";
export { Code, ConnectError, type Client } from "@connectrpc/connect";
