import type { Deps, Module } from "../module.ts";
import type { ReservationService } from "./reservation.service.ts";
import { registerReservationRpc, reservationRpcServices, type LineGuests } from "./reservation.rpc.ts";
import { queues } from "../../jobs/queues.ts";
import { expireOption } from "./options.ts";

/** The reservation as hotelops.reservation.v1.Reservation (the mobile face returns the same message). */
export { reservationOut, lineGuestsFor, type LineGuests } from "./reservation.rpc.ts";

/**
 * Reservations as plain service functions for other modules (mobile, connectivity worker): every call takes
 * an Actor (the acting property id, resolved from the caller's reach, and whether it may override prices)
 * and creates take an explicit `source` and `channel`.
 */
export {
  createReservationService,
  maxNights,
  type ReservationService,
  type AlongsideChange,
  type RoomLineInput,
  type BookingExtras,
  type Actor,
} from "./reservation.service.ts";
export type { Reservation } from "./reservation.repository.ts";
export type { StayMovement } from "./frontdesk.service.ts";
export {
  addDepositPayment,
  changeFeed,
  changeFeedHead,
  countInStatus,
  findByExternalReference,
  findByProviderReference,
  overdueDepositsSummary,
  type OverdueDeposit,
} from "./reservation.repository.ts";
export {
  countDeparturesNotCheckedOut,
  findReservationRef,
  findRoomLineRef,
  type RoomLineRef,
  inHouseNights,
  stayInRoom,
  roomNightsOf,
  unarrivedReservations,
} from "./stays.repository.ts";
export {
  arrivalsReport,
  cancellationsReport,
  dayMovementsSql,
  departuresReport,
  inHouseReport,
  roomNightsByDaySql,
  type ReportQuery,
} from "./reports.repository.ts";
export {
  reservationStatuses,
  reservationSources,
  staffSources,
  checkStaffSource,
  type ReservationStatus,
  type ReservationSource,
} from "./transitions.ts";
export { heldNightsSql, roomLineStaysSql } from "./sql.ts";
export { depositOfBooking } from "./deposits.ts";

export function createReservationsModule(deps: Deps, service: ReservationService, lineGuests?: LineGuests): Module {
  return {
    name: "reservations",
    services: reservationRpcServices,
    registerRpc: (router) => registerReservationRpc(router, service, lineGuests),
    startWorkers: () =>
      deps.boss.registerWorker<{ propertyId: string; reservationId: string }>(
        queues.reservationOptionExpiry,
        (job) =>
          expireOption(
            { transact: deps.transact, clock: deps.clock, cancelInTx: service.cancelInTx },
            job.data.propertyId,
            job.data.reservationId,
          ),
        // a due job is fetched within a second (pg-boss sees startAfter only when it polls)
        {
          pollingIntervalSeconds: 1,
          notifyPollingIntervalSeconds: 1,
          queue: { retryLimit: 10, retryDelay: 5, retryBackoff: true },
        },
      ),
  };
}
