import type { DescMethod } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { scoped } from "../../server/calls.ts";
import { AppError } from "../../errors.ts";

/**
 * RPCs of the partner face that the platform-wide switch turns off (GET /api/v1/status stays up). The token
 * endpoint checks the switch itself: the internal admin client still gets a token while it is off.
 */
const PARTNER_RPCS = new Set(["hotelops.connectivity.v1.ConnectivityService"]);

/**
 * While the partner API is switched off platform-wide, every connectivity endpoint answers 503 before any
 * authentication work. Runs before the auth interceptor.
 */
export function createPartnerSwitchInterceptor(settings: {
  read(): Promise<{ partnerApiEnabled: boolean }>;
}): Interceptor {
  const partner = (m: DescMethod): boolean =>
    PARTNER_RPCS.has(m.parent.typeName) || PARTNER_RPCS.has(`${m.parent.typeName}/${m.name}`);
  return scoped(partner, (next) => async (req) => {
    if (!(await settings.read()).partnerApiEnabled) {
      throw new AppError("unavailable", "The partner API is switched off platform-wide; see GET /api/v1/status.", {
        retryAfterSeconds: 300,
      });
    }
    return next(req);
  });
}
