export interface PlatformStatus {
  status: "operational" | "degraded" | "maintenance";
  apiVersion: "v1";
  partnerApi: "enabled" | "disabled";
}

export interface PlatformSettingsReader {
  read(): Promise<{ status: PlatformStatus["status"]; partnerApiEnabled: boolean }>;
}

export interface StatusService {
  getStatus(): Promise<PlatformStatus>;
}

export function createStatusService(settings: PlatformSettingsReader): StatusService {
  return {
    async getStatus() {
      const s = await settings.read();
      return { status: s.status, apiVersion: "v1", partnerApi: s.partnerApiEnabled ? "enabled" : "disabled" };
    },
  };
}
