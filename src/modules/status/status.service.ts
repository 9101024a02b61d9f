interface PlatformStatus {
  status: "operational" | "degraded" | "maintenance";
  apiVersion: "v1";
  partnerApi: "enabled" | "disabled";
  /** The connectivity API's release label. */
  partnerApiRelease: typeof CONNECTIVITY_RELEASE;
}

/** The spec labels the connectivity API's stable release "v1 beta" (status, capabilities, OpenAPI info, docs). */
export const CONNECTIVITY_RELEASE = "v1 beta";

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
      return {
        status: s.status,
        apiVersion: "v1",
        partnerApi: s.partnerApiEnabled ? "enabled" : "disabled",
        partnerApiRelease: CONNECTIVITY_RELEASE,
      };
    },
  };
}
