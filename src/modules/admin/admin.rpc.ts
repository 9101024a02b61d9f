import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  AdminService as AdminRpc,
  ClientKind,
  ClientSchema,
  PropertySchema,
  type Client,
} from "../../../gen/hotelops/admin/v1/admin_pb.js";
import { invalidField } from "../../errors.ts";
import type { ApiClient } from "../auth/index.ts";
import type { Property } from "../properties/index.ts";
import type { AdminService } from "./admin.service.ts";
import { keyedOf } from "../../server/context.ts";

export const adminRpcServices = [AdminRpc];

export function registerAdminRpc(router: ConnectRouter, service: AdminService): void {
  router.service(AdminRpc, {
    async createProperty(req, ctx) {
      const p = await service.createProperty(
        {
          groupCode: req.groupCode,
          ...(req.groupName !== "" ? { groupName: req.groupName } : {}),
          code: req.code,
          name: req.name,
          timeZone: req.timeZone,
          currency: req.currency,
          ...(req.amountScale !== 0 ? { amountScale: req.amountScale } : {}),
          ...(req.businessDate !== "" ? { businessDate: req.businessDate } : {}),
          emailVerification: req.emailVerification,
          sandbox: req.sandbox,
        },
        keyedOf(ctx),
      );
      return { property: propertyOut(p) };
    },
    async createUser(req, ctx) {
      return {
        user: await service.createUser({ email: req.email, name: req.name, password: req.password }, keyedOf(ctx)),
      };
    },
    async createMembership(req, ctx) {
      return {
        membership: await service.createMembership(
          {
            email: req.email,
            propertyCode: req.propertyCode,
            role: req.role,
          },
          keyedOf(ctx),
        ),
      };
    },
    async createClient(req, ctx) {
      const kind =
        req.kind === ClientKind.INTERNAL
          ? "internal"
          : req.kind === ClientKind.PARTNER || req.kind === ClientKind.UNSPECIFIED
            ? "partner"
            : undefined;
      if (kind === undefined) throw invalidField("kind", "must be PARTNER or INTERNAL");
      const { client, clientSecret } = await service.createClient(
        {
          kind,
          provider: req.provider,
          name: req.name,
          propertyCodes: req.propertyCodes,
          scopes: req.scopes,
        },
        keyedOf(ctx),
      );
      return { client: clientOut(client), clientSecret };
    },
    async approveClient(req, ctx) {
      return { client: clientOut(await service.approveClient(req.clientId, keyedOf(ctx))) };
    },
    async setPartnerApi(req) {
      return { enabled: await service.setPartnerApi(req.enabled) };
    },
    async listClients(req) {
      const page = await service.listClients({ cursor: req.cursor, limit: req.limit });
      return { clients: page.clients.map(clientOut), nextCursor: page.nextCursor };
    },
  });
}

function propertyOut(p: Property) {
  return create(PropertySchema, {
    id: p.id,
    groupCode: p.groupCode,
    code: p.code,
    name: p.name,
    timeZone: p.timeZone,
    currency: p.currency,
    amountScale: p.amountScale,
    businessDate: p.businessDate,
    emailVerification: p.emailVerification,
    sandbox: p.sandbox,
    active: p.active,
  });
}

function clientOut(c: ApiClient): Client {
  return create(ClientSchema, {
    clientId: c.id,
    kind: c.kind === "internal" ? ClientKind.INTERNAL : ClientKind.PARTNER,
    provider: c.provider,
    name: c.name,
    scopes: c.scopes,
    propertyCodes: c.propertyCodes,
    environment: c.environment,
    active: c.active,
    createdAt: timestampFromDate(c.createdAt),
    ...(c.approvedAt !== null ? { approvedAt: timestampFromDate(c.approvedAt) } : {}),
  });
}
