export {
  createNightAuditService,
  type NightAuditCheck,
  type NightAuditService,
  type UnchargedNight,
} from "./night-audit.service.ts";
