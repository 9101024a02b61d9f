export {
  createNightAuditService,
  type CheckId,
  type CheckStatus,
  type MarkNoShow,
  type NightAuditCheck,
  type NightAuditChecks,
  type NightAuditDeps,
  type NightAuditResult,
  type NightAuditService,
  type NightAuditSummary,
  type UnchargedNight,
} from "./night-audit.service.ts";
