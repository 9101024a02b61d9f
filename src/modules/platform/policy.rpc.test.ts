import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { getOption, type DescService } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { rest } from "../../../gen/hotelops/api/v1/rest_pb.js";
import { FolioService } from "../../../gen/hotelops/folio/v1/folio_pb.js";
import { InventoryService } from "../../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService } from "../../../gen/hotelops/reservation/v1/reservation_pb.js";
import { StatusService } from "../../../gen/hotelops/status/v1/status_pb.js";
import { AuthService } from "../../../gen/hotelops/auth/v1/auth_pb.js";
import { MobileService } from "../../../gen/hotelops/mobile/v1/mobile_pb.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { PlatformTestService } from "../../../test/gen/hotelops/platformtest/v1/platform_test_pb.js";
import { policyOf } from "./policy.rpc.ts";

describe("policyOf", () => {
  it("reads writes, required keys and rate-limit classes from the descriptors", () => {
    expect(policyOf(PlatformTestService.method.createWidget)).toEqual({
      rpc: "hotelops.platformtest.v1.PlatformTestService/CreateWidget",
      write: true,
      idempotencyKeyChecked: true,
      idempotencyKeyRequired: false,
      rateLimitClass: "",
    });
    expect(policyOf(PlatformTestService.method.createOrder)).toMatchObject({
      write: true,
      idempotencyKeyRequired: true,
    });
    expect(policyOf(PlatformTestService.method.getWidget)).toMatchObject({ write: false, rateLimitClass: "" });
    expect(policyOf(PlatformTestService.method.login)).toMatchObject({ write: true, rateLimitClass: "auth" });
    expect(policyOf(PlatformTestService.method.ping)).toMatchObject({ write: false, rateLimitClass: "none" });
  });

  it("classifies the service's own RPCs: status unlimited, the token endpoint in its own class, health never limited", () => {
    expect(policyOf(StatusService.method.getStatus)).toMatchObject({ write: false, rateLimitClass: "none" });
    // token, session and personal-data answers are never kept by the idempotency store
    expect(policyOf(AuthService.method.createToken)).toMatchObject({ write: false, rateLimitClass: "token" });
    // ...but a key they are sent must be valid, as the document says on every operation that lists the header
    expect(policyOf(AuthService.method.createToken)).toMatchObject({ idempotencyKeyChecked: true });
    expect(policyOf(MobileService.method.runReport)).toMatchObject({ idempotencyKeyChecked: true });
    expect(policyOf(StatusService.method.getStatus)).toMatchObject({ idempotencyKeyChecked: false });
    expect(policyOf(AuthService.method.switchActiveProperty)).toMatchObject({ write: false, rateLimitClass: "" });
    expect(policyOf(MobileService.method.scanIdentityDocument)).toMatchObject({ write: false });
    expect(policyOf(MobileService.method.runReport)).toMatchObject({ write: false });
    expect(policyOf(MobileService.method.createMobileReservation)).toMatchObject({
      write: true,
      idempotencyKeyRequired: true,
    });
    expect(policyOf(Health.method.check)).toMatchObject({ write: false, rateLimitClass: "none" });
  });
});

/** Every service of the contract, read from the generated descriptors (a new .proto joins without editing this). */
async function contractServices(): Promise<DescService[]> {
  const root = new URL("../../../gen/hotelops/", import.meta.url);
  const found: DescService[] = [];
  for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith("_pb.js")) continue;
    const mod = (await import(new URL(file, root).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) if (isService(value)) found.push(value);
  }
  return found;
}
const isService = (v: unknown): v is DescService =>
  typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "service";

/** A read by its name or binding; anything else must say what it is. */
const READ_NAME = /^(Get|List)[A-Z]/;

describe("every state-changing RPC is marked in the proto", () => {
  it("each RPC is a read by name, or carries exactly one of state_changing / read_only; non-GET bindings too", async () => {
    const services = await contractServices();
    expect(services.length).toBeGreaterThanOrEqual(9);
    const unmarked: string[] = [];
    for (const service of services) {
      for (const method of service.methods) {
        const options = getOption(method, rest);
        const rule = getOption(method, http);
        const boundWrite = rule.pattern.case !== undefined && rule.pattern.case !== "get";
        const marked = options.stateChanging !== options.readOnly;
        if ((!READ_NAME.test(method.name) || boundWrite) && !marked)
          unmarked.push(`${service.typeName}/${method.name}`);
        if (READ_NAME.test(method.name) && options.stateChanging && !boundWrite)
          unmarked.push(`${service.typeName}/${method.name} (a read by name marked state_changing)`);
      }
    }
    expect(unmarked).toEqual([]);
  });

  it("makes the gRPC/Connect-only writes writes (no REST binding needed)", () => {
    for (const m of [
      FolioService.method.postPayment,
      ReservationService.method.createReservation,
      InventoryService.method.setPrices,
    ]) {
      expect(getOption(m, http).pattern.case).toBeUndefined();
      expect(policyOf(m)).toMatchObject({ write: true });
    }
    expect(policyOf(FolioService.method.getFolio)).toMatchObject({ write: false });
  });
});
