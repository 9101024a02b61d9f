import { create } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AuthService, LogoutResponseSchema, RefreshSessionResponseSchema } from "../../gen/hotelops/auth/v1/auth_pb.js";
import {
  ConnectivityService,
  CreateReservationEventResponseSchema,
  GetCapabilitiesResponseSchema,
} from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { idempotencyInterceptor, isWrite } from "./idempotency.ts";

describe("idempotency keys", () => {
  it("judges writes by the REST binding, else by the RPC name", () => {
    expect(isWrite(ConnectivityService.method.createReservationEvent)).toBe(true);
    expect(isWrite(ConnectivityService.method.getCapabilities)).toBe(false);
    expect(isWrite(AuthService.method.logout)).toBe(true);
    expect(isWrite(ReservationService.method.checkInRoomLine)).toBe(true);
    expect(isWrite(ReservationService.method.listReservations)).toBe(false);
  });

  it("adds a fresh key to each write, keeps a caller's key and leaves reads alone", async () => {
    const keys: (string | null)[] = [];
    const transport = createRouterTransport(
      (router) => {
        router.service(ConnectivityService, {
          createReservationEvent: (_r, ctx) => (
            keys.push(ctx.requestHeader.get("idempotency-key")),
            create(CreateReservationEventResponseSchema, {})
          ),
          getCapabilities: (_r, ctx) => (
            keys.push(ctx.requestHeader.get("idempotency-key")),
            create(GetCapabilitiesResponseSchema, {})
          ),
        });
        router.service(AuthService, {
          logout: () => create(LogoutResponseSchema, {}),
          refreshSession: () => create(RefreshSessionResponseSchema, {}),
        });
      },
      { transport: { interceptors: [idempotencyInterceptor()] } },
    );
    const client = createClient(ConnectivityService, transport);
    await client.createReservationEvent({});
    await client.createReservationEvent({});
    await client.createReservationEvent({}, { headers: { "idempotency-key": "mine-1" } });
    await client.getCapabilities({});
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys.slice(2)).toEqual(["mine-1", null]);
  });
});
