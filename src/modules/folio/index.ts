export {
  createFolioService,
  paymentEventData,
  MAX_AMOUNT_MINOR,
  roomChargeProblem,
  type Folio,
  type FolioDeps,
  type FolioKey,
  type FolioService,
  type RoomChargeInput,
} from "./folio.service.ts";
export { paymentMethods, paymentMethodKinds, paymentMethodKind, type PaymentMethodKind } from "./payment-methods.ts";
export {
  findFolio,
  folioTotals,
  folioBalanceOfReservation,
  folioBalancesOfReservations,
  unbalancedFolioReservationIds,
  uninvoicedCharges,
  markChargesInvoiced,
  type ChargeRow,
  type FolioRow,
  type PaymentRow,
} from "./folio.repository.ts";
export { chargesOnDaySql, paymentsByMethodReport, revenueByDayReport } from "./reports.ts";
