import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import type pg from "pg";
import { AuditService as AuditRpc } from "../../../gen/hotelops/audit/v1/audit_pb.js";
import { poolQueryable } from "../../db/queryable.ts";
import { requestProperty, requireStaff } from "../auth/index.ts";
import { listChanges, type ChangeFilter, type ChangePage } from "./audit.repository.ts";

function pageOut(page: ChangePage) {
  return {
    changes: page.changes.map((c) => ({
      id: c.id,
      at: timestampFromDate(c.at),
      entityType: c.entityType,
      entityId: c.entityId,
      action: c.action,
      actor: { kind: c.actorKind, id: c.actorId },
      face: c.face,
      requestId: c.requestId,
      changes: c.changes.map((f) => ({
        field: f.field,
        ...(f.before !== undefined ? { before: fromJson(ValueSchema, f.before as JsonValue) } : {}),
        ...(f.after !== undefined ? { after: fromJson(ValueSchema, f.after as JsonValue) } : {}),
        masked: f.masked === true,
      })),
    })),
    nextCursor: page.nextCursor,
    hasMore: page.hasMore,
  };
}

/** Reads the trail of one property: AuditService.ListChanges and the mobile API's `GET /api/mobile/v1/audit`. */
export function createAuditRpc(pool: pg.Pool) {
  const db = poolQueryable(pool);
  // The method's rule already checked audit.read in the session's active property; a staff session reaches only
  // that property (another code is 404 from the authentication interceptor, which resolved the one named).
  const list = async (propertyId: string, filter: ChangeFilter) => pageOut(await listChanges(db, propertyId, filter));
  return {
    register(router: ConnectRouter): void {
      router.service(AuditRpc, {
        listChanges: (req, ctx) =>
          list(requestProperty(ctx.values)?.id ?? requireStaff(ctx.values).activePropertyId, req),
      });
    },
    mobileRpc: {
      listAuditChanges: (req: ChangeFilter, ctx: HandlerContext) =>
        list(requireStaff(ctx.values).activePropertyId, req),
    },
  };
}
