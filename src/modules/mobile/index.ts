import type { ServiceImpl } from "@connectrpc/connect";
import { MobileService } from "../../../gen/hotelops/mobile/v1/mobile_pb.js";
import type { Deps, Module } from "../module.ts";
import type { InventoryService } from "../inventory/index.ts";
import type { NightAuditService } from "../night-audit/index.ts";
import type { LineGuests, ReservationService } from "../reservations/index.ts";
import { mobileRpc } from "./mobile.rpc.ts";
import { createMobileReservations } from "./reservations.service.ts";
import { createReportsService, createStatsService } from "../reports/index.ts";

/** The parts of MobileService other modules implement (merged into this module's one registration). */
export type MobileRpcParts = Pick<ServiceImpl<typeof MobileService>, "scanIdentityDocument" | "listAuditChanges">;

/**
 * hotelops.mobile.v1.MobileService: reservations, dashboard, forecast, reports and night audit of the staff session's
 * active property. MobileService is registered once, here, with the identity module's ScanIdentityDocument
 * and the audit module's ListAuditChanges spread in (`parts`).
 */
export function createMobileModule(
  deps: Deps,
  options: {
    inventory: InventoryService;
    reservations: ReservationService;
    nightAudit: NightAuditService;
    parts: MobileRpcParts;
    /** The guests of room lines on GetMobileReservation (the guests module's reader). */
    lineGuests?: LineGuests;
    /** The dashboard's guest reporting figures (the guests module's). */
    guestReporting?: (propertyId: string) => Promise<{ unreported: number; failed: number }>;
  },
): Module {
  const impl = mobileRpc({
    reservations: createMobileReservations({
      pool: deps.db.pool,
      inventory: options.inventory,
      reservations: options.reservations,
    }),
    stats: createStatsService({ pool: deps.db.pool }),
    reports: createReportsService({ pool: deps.db.pool, clock: deps.clock, replicaReads: deps.db.replicaReads }),
    nightAudit: options.nightAudit,
    lineGuests: options.lineGuests,
    guestReporting: options.guestReporting,
  });
  return {
    name: "mobile",
    services: [MobileService],
    registerRpc: (router) => router.service(MobileService, { ...options.parts, ...impl }),
  };
}
