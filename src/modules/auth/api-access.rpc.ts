import type { ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type pg from "pg";
import { ApiAccessService as ApiAccessRpc } from "../../../gen/hotelops/panel/v1/api_access_pb.js";
import { AppError } from "../../errors.ts";
import { listPropertyClients } from "./clients.repository.ts";
import { requireStaff } from "./scope.ts";
import { pageOf, pageResult } from "../../lib/page.ts";

/** Pages of the panel's client list: 1-200 clients, default 50. */
const PROPERTY_CLIENT_PAGE = { default: 50, max: 200 };

export const apiAccessRpcServices = [ApiAccessRpc];

/** The panel's API access page: the partner clients that reach the session's active property (read-only). */
export function registerApiAccessRpc(router: ConnectRouter, pool: pg.Pool): void {
  router.service(ApiAccessRpc, {
    async listApiClients(req, ctx) {
      const p = requireStaff(ctx.values);
      if (!p.permissions.has("integrations.manage"))
        throw new AppError("forbidden", "Missing permission integrations.manage in the active property.");
      const page = pageOf({ cursor: req.cursor, limit: req.limit }, PROPERTY_CLIENT_PAGE);
      const { items, nextCursor } = pageResult(
        await listPropertyClients(pool, p.activePropertyId, { ...page, limit: page.limit + 1 }),
        page.limit,
      );
      return {
        nextCursor,
        clients: items.map((c) => ({
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
