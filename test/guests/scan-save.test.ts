import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { AuditService } from "../../gen/hotelops/audit/v1/audit_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { doubleRoomsAtBar, roomNumbers } from "../helpers/hotel-fixtures.ts";

// The identity scan saving the person read as a room line's guest (POST /api/mobile/v1/identity-scan with
// saveToRoomLine and confirmed; MobileService.ScanIdentityDocument on Connect and gRPC): created, or found by the
// document number's keyed hash and updated; linked to the line; refused without the staff's confirmation, for a
// read that fails its checks and for another property's line.

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;
let desk: string, manager: string, deskB: string;
const lines: string[] = [];
let reservationId: string;
let lineB: string;

const file = (name: string) => readFileSync(new URL(`../fixtures/identity/${name}`, import.meta.url));
const tcCard = () => [
  ["images", new Blob([file("tc-kimlik-front.png")], { type: "image/png" }), "front.png"] as const,
  ["images", new Blob([file("tc-kimlik-back.webp")], { type: "image/webp" }), "back.webp"] as const,
];

async function scan(
  parts: (readonly [string, string | Blob, string?])[],
  token = desk,
): Promise<{ status: number; body: Json }> {
  const form = new FormData();
  for (const [name, value, filename] of parts)
    if (typeof value === "string") form.append(name, value);
    else form.append(name, value, filename ?? "photo");
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/identity-scan`, {
    method: "POST",
    body: form,
    headers: { ...bearer(token), "idempotency-key": newId() },
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function hotel(groupCode: string) {
  const property = await createTestProperty(app, { groupCode, businessDate: "2027-03-01" });
  const { roomTypeId, ratePlanId } = await doubleRoomsAtBar(app.services.inventory, property.id, roomNumbers(101, 104));
  const session = async (role: string) =>
    (await createStaffSession(app, { propertyCode: property.code, role })).accessToken;
  const token = await session("manager");
  const reserve = async () => {
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        holderName: "Ayse Yilmaz",
        arrivalDate: "2027-03-10",
        departureDate: "2027-03-12",
        roomTypeId,
        ratePlanId,
        adults: 2,
        totalMinor: 50000,
        currency: "TRY",
      }),
    });
    const body = (await res.json()) as Json;
    return { id: body.id as string, lineId: body.rooms[0].id as string };
  };
  return { manager: token, desk: await session("front_desk"), reserve };
}

beforeAll(async () => {
  app = await startTestApp();
  const group = `SC-${randomBytes(3).toString("hex")}`;
  const a = await hotel(group);
  const b = await hotel(`${group}-OTHER`);
  [desk, manager, deskB] = [a.desk, a.manager, b.desk];
  for (let i = 0; i < 3; i++) {
    const r = await a.reserve();
    lines.push(r.lineId);
    if (i === 0) reservationId = r.id;
  }
  lineB = (await b.reserve()).lineId;
}, 60_000);
afterAll(async () => {
  await app?.close();
});

describe("saving a scanned identity card to a room line", () => {
  it(
    "creates the guest from a confirmed TC kimlik read, links it, records both (REST)",
    { timeout: 90_000 },
    async () => {
      const r = await scan([
        ["documentType", "TC_KIMLIK"],
        ...tcCard(),
        ["saveToRoomLine", lines[0]!],
        ["confirmed", "true"],
      ]);
      expect(r.status).toBe(200);
      expect(r.body.valid).toBe(true);
      expect(r.body.guestCreated).toBe(true);
      expect(r.body.guest).toMatchObject({
        givenName: "Ayse Gul",
        familyName: "Yilmaz",
        nationality: "TR",
        documentType: "TC_KIMLIK",
        documentNumber: "10*******46",
        documentCountry: "TR",
        birthDate: "****-**-**",
        masked: true,
      });
      const id = r.body.guest.id as string;
      const reservations = createClient(
        ReservationService,
        createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      );
      const read = await reservations.getReservation({ reservationId }, { headers: bearer(manager) });
      expect(read.reservation!.rooms[0]!.guests).toMatchObject([
        { id, documentNumber: "10000000146", documentExpiry: expect.stringMatching(/^20\d\d-/), masked: false },
      ]);
      const audit = createClient(AuditService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
      const trail = await audit.listChanges({ entityType: "guest", entityId: id }, { headers: bearer(manager) });
      expect(trail.changes.map((c) => c.action)).toEqual(["read_sensitive", "link_stay", "create"]);
    },
  );

  it(
    "finds the same person by the document number's keyed hash on Connect; saves nothing unconfirmed on gRPC",
    {
      timeout: 90_000,
    },
    async () => {
      const connect = createClient(MobileService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
      const images = [
        { content: file("tc-kimlik-front.png"), contentType: "image/png", filename: "front.png" },
        { content: file("tc-kimlik-back.webp"), contentType: "image/webp", filename: "back.webp" },
      ];
      // the profile's own spelling (accents the MRZ cannot carry) is kept when the names read the same
      const before = await fetch(`${app.baseUrl}/api/panel/v1/guests?documentNumber=10000000146`, {
        headers: bearer(desk),
      });
      const existing = (((await before.json()) as Json).guests as Json[])[0]!;
      await fetch(`${app.baseUrl}/api/panel/v1/guests/${existing.id}`, {
        method: "PATCH",
        headers: { ...bearer(desk), "content-type": "application/json" },
        body: JSON.stringify({ givenName: "Ayşe Gül", familyName: "Yılmaz" }),
      });
      const saved = await connect.scanIdentityDocument(
        { documentType: "TC_KIMLIK", images, saveToRoomLine: lines[1]!, confirmed: true },
        { headers: bearer(desk) },
      );
      expect(saved.guestCreated).toBe(false);
      expect(saved.guest).toMatchObject({
        id: existing.id,
        givenName: "Ayşe Gül",
        familyName: "Yılmaz",
        documentNumber: "10*******46",
      });
      const search = await fetch(`${app.baseUrl}/api/panel/v1/guests?documentNumber=10000000146`, {
        headers: bearer(desk),
      });
      const found = ((await search.json()) as Json).guests as Json[];
      expect(found.map((g) => g.id)).toEqual([saved.guest!.id]);

      const grpc = createClient(MobileService, createGrpcTransport({ baseUrl: app.baseUrl }));
      const unconfirmed = await grpc
        .scanIdentityDocument(
          { documentType: "TC_KIMLIK", images, saveToRoomLine: lines[2]! },
          { headers: bearer(desk) },
        )
        .catch((e: unknown) => e);
      expect((unconfirmed as ConnectError).code).toBe(Code.InvalidArgument);
      expect((unconfirmed as ConnectError).findDetails(ErrorInfoSchema)[0]?.details[0]?.field).toBe("confirmed");
    },
  );

  it(
    "refuses an unconfirmed save (400) and a read that fails its checks (422 naming the field), saving nothing",
    {
      timeout: 90_000,
    },
    async () => {
      const unconfirmed = await scan([["documentType", "TC_KIMLIK"], ...tcCard(), ["saveToRoomLine", lines[2]!]]);
      expect(unconfirmed.status).toBe(400);
      expect(unconfirmed.body.error.details).toEqual([
        { field: "confirmed", reason: "must be true to save the read fields (compare them with the document)" },
      ]);
      const bad = await scan([
        ["documentType", "PASSPORT"],
        ["images", new Blob([file("passport-td3-bad-check.png")], { type: "image/png" }), "p.png"],
        ["saveToRoomLine", lines[2]!],
        ["confirmed", "true"],
      ]);
      expect(bad.status).toBe(422);
      expect(bad.body.error.code).toBe("validation_failed");
      expect(bad.body.error.details[0]).toEqual({ field: "documentNumber", reason: "check digit does not match" });
      const search = await fetch(`${app.baseUrl}/api/panel/v1/guests?documentNumber=L898902C3`, {
        headers: bearer(desk),
      });
      expect(((await search.json()) as Json).guests).toEqual([]);
    },
  );

  it("answers 404 for another property's room line, like a missing one", { timeout: 90_000 }, async () => {
    for (const line of [lineB, newId()]) {
      const r = await scan([
        ["documentType", "TC_KIMLIK"],
        ...tcCard(),
        ["saveToRoomLine", line],
        ["confirmed", "true"],
      ]);
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: "not_found", message: "Room line not found." });
    }
    // B's own desk saves to B's line: a profile of B's group, not A's
    const own = await scan(
      [["documentType", "TC_KIMLIK"], ...tcCard(), ["saveToRoomLine", lineB], ["confirmed", "true"]],
      deskB,
    );
    expect(own.status).toBe(200);
    expect(own.body.guestCreated).toBe(true);
  });
});
