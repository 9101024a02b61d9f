export { createFolioService, roomChargeProblem, type Folio, type FolioService } from "./folio.service.ts";
export {
  findFolio,
  folioBalanceOfReservation,
  folioBalancesOfReservations,
  foliosOfReservations,
  listFoliosOfReservation,
  unbalancedFolioReservationIds,
  uninvoicedCharges,
  markChargesInvoiced,
  releaseInvoicedCharges,
  type ChargeRow,
  type FolioRow,
  type PaymentRow,
} from "./folio.repository.ts";
export { paymentMethodKind } from "./payment-methods.ts";
export { postReturnCredit, reverseReturnCredit } from "./credit-lines.ts";
export { createFolioWindows, type FolioWindows } from "./windows.service.ts";
export { chargesOnDaySql, paymentsByMethodReport, revenueByDayReport } from "./reports.ts";
