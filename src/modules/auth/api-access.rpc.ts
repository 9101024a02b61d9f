import type { ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type pg from "pg";
import { ApiAccessService as ApiAccessRpc } from "../../../gen/hotelops/panel/v1/api_access_pb.js";
import { AppError } from "../../errors.ts";
import { listPropertyClients } from "./clients.repository.ts";
import { requireStaff } from "./scope.ts";

export const apiAccessRpcServices = [ApiAccessRpc];

/** The panel's API access page: the partner clients that reach the session's active property (read-only). */
export function registerApiAccessRpc(router: ConnectRouter, pool: pg.Pool): void {
  router.service(ApiAccessRpc, {
    async listApiClients(_req, ctx) {
      const p = requireStaff(ctx.values);
      if (!p.permissions.has("integrations.manage"))
        throw new AppError("forbidden", "Missing permission integrations.manage in the active property.");
      const clients = await listPropertyClients(pool, p.activePropertyId);
      return {
        clients: clients.map((c) => ({
          clientId: c.id,
          provider: c.provider,
          name: c.name,
          scopes: c.scopes,
          environment: c.environment,
          createdAt: timestampFromDate(c.createdAt),
          ...(c.approvedAt ? { approvedAt: timestampFromDate(c.approvedAt) } : {}),
          ...(c.lastTokenAt ? { lastTokenAt: timestampFromDate(c.lastTokenAt) } : {}),
        })),
      };
    },
  });
}
