import type { Interceptor } from "@connectrpc/connect";
import { AppError } from "../../errors.ts";

/** RPCs of the partner face that the platform-wide switch turns off (GET /api/v1/status stays up). */
const PARTNER_RPCS = new Set([
  "hotelops.connectivity.v1.ConnectivityService",
  "hotelops.auth.v1.AuthService/CreateToken",
]);

/**
 * While the partner API is switched off platform-wide, every connectivity endpoint answers 503 before any
 * authentication work. Runs before the auth interceptor.
 */
export function createPartnerSwitchInterceptor(settings: {
  read(): Promise<{ partnerApiEnabled: boolean }>;
}): Interceptor {
  return (next) => async (req) => {
    if (PARTNER_RPCS.has(req.service.typeName) || PARTNER_RPCS.has(`${req.service.typeName}/${req.method.name}`)) {
      if (!(await settings.read()).partnerApiEnabled) {
        throw new AppError("unavailable", "The partner API is switched off platform-wide; see GET /api/v1/status.", {
          retryAfterSeconds: 300,
        });
      }
    }
    return next(req);
  };
}
