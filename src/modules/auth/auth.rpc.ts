import type { ConnectRouter } from "@connectrpc/connect";
import { AuthService as AuthRpc } from "../../../gen/hotelops/auth/v1/auth_pb.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ClientTokenService } from "./client-token.service.ts";
import type { LoginService } from "./login.service.ts";
import type { StaffTokens } from "./sessions.service.ts";
import { requireStaff } from "./scope.ts";
import { keyedOf } from "../../server/context.ts";

export const authRpcServices = [AuthRpc];

const tokensOf = (t: StaffTokens) => ({
  accessToken: t.accessToken,
  refreshToken: t.refreshToken,
  expiresIn: t.expiresIn,
});

export function registerAuthRpc(router: ConnectRouter, service: ClientTokenService, login: LoginService): void {
  router.service(AuthRpc, {
    async login(req) {
      const r = await login.login({
        hotelCode: req.hotelCode,
        email: req.email,
        password: req.password,
        deviceId: req.deviceId,
        deviceName: req.deviceName,
      });
      return r.kind === "challenge"
        ? { challengeId: r.challengeId, maskedEmail: r.maskedEmail, expiresAt: timestampFromDate(r.expiresAt) }
        : { tokens: tokensOf(r.tokens), profile: r.profile };
    },
    async verifyLogin(req) {
      const r = await login.verify({
        challengeId: req.challengeId,
        code: req.code,
        deviceId: req.deviceId,
        deviceName: req.deviceName,
      });
      return { tokens: tokensOf(r.tokens), profile: r.profile };
    },
    async refreshSession(req) {
      return { tokens: tokensOf(await login.refresh(req.refreshToken, req.deviceId)) };
    },
    async switchActiveProperty(req, ctx) {
      const r = await login.switchProperty(requireStaff(ctx.values), req.propertyId);
      return { tokens: tokensOf(r.tokens), profile: r.profile };
    },
    async logout(_req, ctx) {
      await login.logout(requireStaff(ctx.values).sessionId, keyedOf(ctx));
      return {};
    },
    // The REST gateway forwards the Authorization header; gRPC/Connect callers send it as metadata.
    createToken: (req, ctx) =>
      service.createToken({
        authorization: ctx.requestHeader.get("authorization"),
        grantType: req.grantType,
        scope: req.scope,
        clientId: req.clientId,
        clientSecret: req.clientSecret,
      }),
  });
}
