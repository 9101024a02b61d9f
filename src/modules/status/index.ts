export { createStatusService, type StatusService, type PlatformStatus, type PlatformSettingsReader } from "./status.service.ts";
export { registerStatusRpc, statusRpcServices } from "./status.rpc.ts";
