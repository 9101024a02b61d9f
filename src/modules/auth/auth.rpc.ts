import type { ConnectRouter } from "@connectrpc/connect";
import { AuthService as AuthRpc } from "../../../gen/hotelops/auth/v1/auth_pb.js";
import type { ClientTokenService } from "./client-token.service.ts";

export const authRpcServices = [AuthRpc];

export function registerAuthRpc(router: ConnectRouter, service: ClientTokenService): void {
  router.service(AuthRpc, {
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
