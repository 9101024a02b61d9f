export {
  createCityLedger,
  type CityLedger,
  type AccountRow,
  type ItemRow,
  type AllocationRow,
} from "./ledger.service.ts";
