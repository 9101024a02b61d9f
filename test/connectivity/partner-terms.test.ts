import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

// Partners read a rate plan's cancellation and no-show policy and its deposit rule beside its codes: in the
// mappings and in the ARI read, over REST, Connect and gRPC. A plan without them shows neither field.

let app: TestApp;
let code: string;
let token: string;
beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: "2027-01-01" });
  code = p.code;
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inv.createRoom(p.id, { number: "101", roomTypeId: dbl.id });
  for (const c of ["BAR", "NRF"]) {
    const rp = await inv.createRatePlan(p.id, { code: c, name: c, boardType: "ROOM_ONLY", roomTypeIds: [dbl.id] });
    await inv.setPrices(p.id, {
      ratePlanId: rp.id,
      roomTypeId: dbl.id,
      from: "2027-01-01",
      to: "2027-01-05",
      amountMinor: 10_000n,
    });
    if (c === "NRF") {
      await inv.setRatePlanPolicy(p.id, rp.id, { freeHours: 48, feeKind: "PERCENT", feeValue: 5_000n });
      await inv.setRatePlanDeposit(p.id, rp.id, {
        kind: "FIRST_NIGHT",
        value: 0n,
        dueAnchor: "BEFORE_ARRIVAL",
        dueDays: 7,
      });
    }
  }
  ({ accessToken: token } = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [code],
    scopes: ["ari.read", "mappings.read"],
  }));
});
afterAll(async () => {
  await app?.close();
});

const transportOf = (face: "connect" | "grpc"): Transport =>
  face === "grpc"
    ? createGrpcTransport({ baseUrl: app.baseUrl })
    : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });

describe("rate plan terms in the partner reads", { timeout: 60_000 }, () => {
  it("REST: mappings and ARI show the policy and the deposit of a plan that has them", async () => {
    const headers = bearer(token);
    const m = await fetch(`${app.baseUrl}/api/v1/properties/${code}/mappings`, { headers });
    expect(m.status).toBe(200);
    const mappings = (await m.json()) as {
      ratePlans: {
        code: string;
        cancellationPolicy?: Record<string, unknown>;
        depositPolicy?: Record<string, unknown>;
      }[];
    };
    const byCode = new Map(mappings.ratePlans.map((rp) => [rp.code, rp]));
    expect(byCode.get("NRF")!.cancellationPolicy).toMatchObject({ freeUntilHours: 48, feeKind: "PERCENT" });
    expect(Number(byCode.get("NRF")!.cancellationPolicy!.feeValue)).toBe(5_000);
    expect(byCode.get("NRF")!.depositPolicy).toMatchObject({
      kind: "FIRST_NIGHT",
      dueAnchor: "BEFORE_ARRIVAL",
      dueDays: 7,
    });
    expect(byCode.get("BAR")!.cancellationPolicy ?? null).toBeNull();
    expect(byCode.get("BAR")!.depositPolicy ?? null).toBeNull();

    const a = await fetch(`${app.baseUrl}/api/v1/properties/${code}/ari?from=2027-01-01&to=2027-01-03`, { headers });
    expect(a.status).toBe(200);
    const ari = (await a.json()) as {
      roomTypes: { ratePlans: { code: string; cancellationPolicy?: object; depositPolicy?: object }[] }[];
    };
    const plans = new Map(ari.roomTypes[0]!.ratePlans.map((rp) => [rp.code, rp]));
    expect(plans.get("NRF")!.cancellationPolicy).toMatchObject({ freeUntilHours: 48, feeKind: "PERCENT" });
    expect(plans.get("NRF")!.depositPolicy).toMatchObject({ kind: "FIRST_NIGHT", dueDays: 7 });
    expect(plans.get("BAR")!.cancellationPolicy ?? null).toBeNull();
  });

  for (const face of ["connect", "grpc"] as const)
    it(`${face}: GetMappings and GetAri carry the same terms`, async () => {
      const client = createClient(ConnectivityService, transportOf(face));
      const opts = { headers: bearer(token) };
      const m = await client.getMappings({ propertyCode: code }, opts);
      const nrf = m.ratePlans.find((rp) => rp.code === "NRF")!;
      expect(nrf.cancellationPolicy).toMatchObject({ freeUntilHours: 48, feeKind: "PERCENT", feeValue: 5_000n });
      expect(nrf.depositPolicy).toMatchObject({
        kind: "FIRST_NIGHT",
        value: 0n,
        dueAnchor: "BEFORE_ARRIVAL",
        dueDays: 7,
      });
      expect(m.ratePlans.find((rp) => rp.code === "BAR")!.cancellationPolicy).toBeUndefined();
      const a = await client.getAri({ propertyCode: code, from: "2027-01-01", to: "2027-01-03" }, opts);
      const plans = new Map(a.roomTypes[0]!.ratePlans.map((rp) => [rp.code, rp]));
      expect(plans.get("NRF")!.cancellationPolicy).toMatchObject({ freeUntilHours: 48, feeValue: 5_000n });
      expect(plans.get("NRF")!.depositPolicy).toMatchObject({ kind: "FIRST_NIGHT", dueDays: 7 });
      expect(plans.get("BAR")!.depositPolicy).toBeUndefined();
      expect(plans.get("BAR")!.days).toHaveLength(2);
    });
});
