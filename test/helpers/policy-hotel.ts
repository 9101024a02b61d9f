import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type { TestApp } from "./app.ts";
import { createStaffSession, createTestProperty } from "./auth.ts";

/** The two RPC faces the policy tests drive (REST, where there is a route, is called with fetch). */
export type Face = "connect" | "grpc";

export function transportFor(app: TestApp, face: Face): Transport {
  return face === "grpc"
    ? createGrpcTransport({ baseUrl: app.baseUrl })
    : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
}

/**
 * An Istanbul property on business date 2026-12-02 with `rooms` double rooms, one ROOM_ONLY rate plan per code at
 * 10,000 a night from 2026-12-01 to 2027-01-31, and a manager session. `plans` maps each code to its rate plan id.
 */
export async function policyHotel<C extends string>(app: TestApp, codes: readonly C[], rooms = 6) {
  const p = await createTestProperty(app, { businessDate: "2026-12-02", timeZone: "Europe/Istanbul" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  for (let n = 1; n <= rooms; n++) await inv.createRoom(p.id, { number: String(200 + n), roomTypeId: dbl.id });
  const plans = {} as Record<C, string>;
  for (const code of codes) {
    const rp = await inv.createRatePlan(p.id, { code, name: code, boardType: "ROOM_ONLY", roomTypeIds: [dbl.id] });
    await inv.setPrices(p.id, {
      ratePlanId: rp.id,
      roomTypeId: dbl.id,
      from: "2026-12-01",
      to: "2027-01-31",
      amountMinor: 10_000n,
    });
    plans[code] = rp.id;
  }
  const manager = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  return { p, dbl: dbl.id, plans, manager };
}
