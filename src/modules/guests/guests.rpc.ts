import type { JsonObject } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { GuestService as GuestRpc } from "../../../gen/hotelops/guest/v1/guest_pb.js";
import { requestProperty, requireStaff } from "../auth/index.ts";
import { emptyGuestFields, type GuestFields } from "./fields.ts";
import type { Guest, GuestScope, GuestService } from "./guests.service.ts";
import type { ListedReport } from "./reports.repository.ts";
import { keyedOf } from "../../server/context.ts";

const fieldNames = Object.keys(emptyGuestFields) as (keyof GuestFields)[];

/** A guest as hotelops.guest.v1.Guest (the reservation and mobile faces carry the same message). */
export function guestOut({ erasedAt, ...g }: Guest) {
  return {
    ...g,
    createdAt: timestampFromDate(g.createdAt),
    updatedAt: timestampFromDate(g.updatedAt),
    ...(erasedAt === null ? {} : { erasedAt: timestampFromDate(erasedAt) }),
  };
}

/** A guest report as hotelops.guest.v1.GuestReport (proto3 strings: absent is ""). */
function reportOut({ sentAt, createdAt, guestId, roomNumber, lastError, reference, ...r }: ListedReport) {
  return {
    ...r,
    guestId: guestId ?? "",
    roomNumber: roomNumber ?? "",
    lastError: lastError ?? "",
    reference: reference ?? "",
    ...(sentAt === null ? {} : { sentAt: timestampFromDate(sentAt) }),
    createdAt: timestampFromDate(createdAt),
  };
}

/** The proto request's guest fields (proto3 strings: absent is ""). */
function fieldsIn(req: Record<string, unknown>): GuestFields {
  const out = { ...emptyGuestFields };
  for (const f of fieldNames) if (typeof req[f] === "string") (out as Record<string, string>)[f] = req[f];
  return out;
}

/** The fields an update names (proto3 `optional`: undefined when absent). */
function patchIn(req: Record<string, unknown>): Partial<GuestFields> {
  const out: Partial<Record<keyof GuestFields, string>> = {};
  for (const f of fieldNames) if (typeof req[f] === "string") out[f] = req[f];
  return out as Partial<GuestFields>;
}

/** GuestService over gRPC, Connect and REST (the /api/panel/v1/guests routes). */
export function createGuestRpc(guests: GuestService) {
  /**
   * The staff caller's scope: the named property (empty: the session's active one), checked against the caller's
   * reach by the authentication interceptor (404 out of reach).
   */
  const scope = async (ctx: HandlerContext): Promise<GuestScope> =>
    guests.scopeOf(requestProperty(ctx.values)?.id ?? requireStaff(ctx.values).activePropertyId);
  const reveals = (ctx: HandlerContext) => requireStaff(ctx.values).permissions.has("guests.read_sensitive");
  return {
    register(router: ConnectRouter): void {
      router.service(GuestRpc, {
        createGuest: async (req, ctx) => ({
          guest: guestOut(await guests.create(await scope(ctx), fieldsIn(req))),
        }),
        getGuest: async (req, ctx) => ({
          guest: guestOut(await guests.get(await scope(ctx), req.guestId, reveals(ctx))),
        }),
        updateGuest: async (req, ctx) => ({
          guest: guestOut(await guests.update(await scope(ctx), req.guestId, patchIn(req))),
        }),
        searchGuests: async (req, ctx) => {
          const found = await guests.search(await scope(ctx), req);
          return { guests: found.guests.map(guestOut), nextCursor: found.nextCursor };
        },
        addRoomLineGuest: async (req, ctx) => {
          const r = await guests.addToLine(
            await scope(ctx),
            { reservationId: req.reservationId, reservationRoomId: req.reservationRoomId },
            req.guestId,
          );
          return { guests: r.guests.map(guestOut), added: r.added };
        },
        removeRoomLineGuest: async (req, ctx) => ({
          guests: (
            await guests.removeFromLine(
              await scope(ctx),
              { reservationId: req.reservationId, reservationRoomId: req.reservationRoomId },
              req.guestId,
            )
          ).map(guestOut),
        }),
        listGuestStays: async (req, ctx) => {
          const page = await guests.stays(await scope(ctx), req.guestId, req);
          return {
            stays: page.stays.map(({ checkedInAt, checkedOutAt, linkedAt, roomNumber, propertyId: _, ...s }) => ({
              ...s,
              roomNumber: roomNumber ?? "",
              ...(checkedInAt === null ? {} : { checkedInAt: timestampFromDate(checkedInAt) }),
              ...(checkedOutAt === null ? {} : { checkedOutAt: timestampFromDate(checkedOutAt) }),
              linkedAt: timestampFromDate(linkedAt),
            })),
            nextCursor: page.nextCursor,
          };
        },
        exportGuest: async (req, ctx) => ({
          export: (await guests.exportGuest(await scope(ctx), req.guestId)) as JsonObject,
        }),
        eraseGuest: async (req, ctx) => {
          const r = await guests.eraseGuest(await scope(ctx), req.guestId);
          return { guest: guestOut(r.guest), alreadyErased: r.alreadyErased, kept: [...r.kept] };
        },
        listGuestReports: async (req, ctx) => {
          const page = await guests.reporting.list((await scope(ctx)).propertyId, req);
          return { reports: page.reports.map(reportOut), nextCursor: page.nextCursor };
        },
        resendGuestReport: async (req, ctx) => ({
          report: reportOut(
            await guests.reporting.resend((await scope(ctx)).propertyId, req.guestReportId, keyedOf(ctx)),
          ),
        }),
        listUnreportedGuests: async (req, ctx) => {
          const found = await guests.reporting.issues((await scope(ctx)).propertyId);
          return {
            unreported: found.unreported.map((u) => ({
              ...u,
              roomNumber: u.roomNumber ?? "",
              guestId: u.guestId ?? "",
            })),
            failedReports: found.failed,
          };
        },
        mergeGuests: async (req, ctx) => {
          const r = await guests.merge(await scope(ctx), req.guestId, req.duplicateGuestIds);
          return { guest: guestOut(r.guest), staysMoved: r.staysMoved };
        },
      });
    },
  };
}
