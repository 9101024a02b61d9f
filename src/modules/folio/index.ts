export { createFolioService, roomChargeProblem, type Folio, type FolioService } from "./folio.service.ts";
export {
  findFolio,
  folioBalanceOfReservation,
  folioBalancesOfReservations,
  unbalancedFolioReservationIds,
  uninvoicedCharges,
  markChargesInvoiced,
  releaseInvoicedCharges,
  type ChargeRow,
  type FolioRow,
  type PaymentRow,
} from "./folio.repository.ts";
export { chargesOnDaySql, paymentsByMethodReport, revenueByDayReport } from "./reports.ts";
