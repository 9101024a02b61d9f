import { describe, expect, it } from "vitest";
import { StatusService } from "../../../gen/hotelops/status/v1/status_pb.js";
import { AuthService } from "../../../gen/hotelops/auth/v1/auth_pb.js";
import { MobileService } from "../../../gen/hotelops/mobile/v1/mobile_pb.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { PlatformTestService } from "../../../test/gen/hotelops/platformtest/v1/platform_test_pb.js";
import { policyOf } from "./policy.rpc.ts";

describe("policyOf", () => {
  it("reads writes, required keys and rate-limit classes from the descriptors", () => {
    expect(policyOf(PlatformTestService.method.createWidget)).toEqual({ rpc: "hotelops.platformtest.v1.PlatformTestService/CreateWidget", write: true, idempotencyKeyRequired: false, rateLimitClass: "" });
    expect(policyOf(PlatformTestService.method.createOrder)).toMatchObject({ write: true, idempotencyKeyRequired: true });
    expect(policyOf(PlatformTestService.method.getWidget)).toMatchObject({ write: false, rateLimitClass: "" });
    expect(policyOf(PlatformTestService.method.login)).toMatchObject({ write: true, rateLimitClass: "auth" });
    expect(policyOf(PlatformTestService.method.ping)).toMatchObject({ write: false, rateLimitClass: "none" });
  });

  it("classifies the service's own RPCs: status unlimited, the token endpoint in its own class, health never limited", () => {
    expect(policyOf(StatusService.method.getStatus)).toMatchObject({ write: false, rateLimitClass: "none" });
    // token, session and personal-data answers are never kept by the idempotency store
    expect(policyOf(AuthService.method.createToken)).toMatchObject({ write: false, rateLimitClass: "token" });
    expect(policyOf(AuthService.method.switchActiveProperty)).toMatchObject({ write: false, rateLimitClass: "" });
    expect(policyOf(MobileService.method.scanIdentityDocument)).toMatchObject({ write: false });
    expect(policyOf(MobileService.method.runReport)).toMatchObject({ write: false });
    expect(policyOf(MobileService.method.createMobileReservation)).toMatchObject({ write: true, idempotencyKeyRequired: true });
    expect(policyOf(Health.method.check)).toMatchObject({ write: false, rateLimitClass: "none" });
  });
});
