import { AuditService } from "../../../gen/hotelops/audit/v1/audit_pb.js";
import type { Deps, Module } from "../module.ts";
import { startAuditJobs } from "./audit.jobs.ts";
import { createAuditRpc } from "./audit.rpc.ts";

export { recordChange } from "./record.ts";
export { maintainAuditPartitions, auditPartitions } from "./partitions.ts";

/**
 * The audit trail: `recordChange` (called by the owning modules inside the transaction of each change), the read
 * face (AuditService.ListChanges; the mobile API's ListAuditChanges is spread into MobileService by app.ts) and
 * the partition job.
 */
export function createAuditModule(deps: Deps): Module & { mobileRpc: ReturnType<typeof createAuditRpc>["mobileRpc"] } {
  const rpc = createAuditRpc(deps.db.pool);
  return {
    name: "audit",
    services: [AuditService],
    registerRpc: (router) => rpc.register(router),
    mobileRpc: rpc.mobileRpc,
    startWorkers: () => startAuditJobs(deps.boss, deps),
  };
}
