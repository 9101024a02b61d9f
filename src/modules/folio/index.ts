export {
  createFolioService,
  paymentEventData,
  MAX_AMOUNT_MINOR,
  type Folio,
  type FolioDeps,
  type FolioKey,
  type FolioService,
  type RoomChargeInput,
} from "./folio.service.ts";
export { paymentMethods, paymentMethodKinds, paymentMethodKind, type PaymentMethodKind } from "./payment-methods.ts";
export {
  findFolio,
  loadProperty,
  folioTotals,
  uninvoicedCharges,
  markChargesInvoiced,
  type ChargeRow,
  type FolioRow,
  type PaymentRow,
  type PropertyRow,
} from "./folio.repository.ts";
