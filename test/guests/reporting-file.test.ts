import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { createFileSender } from "../../src/modules/guests/report-senders.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { doubleRoomsAtBar, roomNumbers } from "../helpers/hotel-fixtures.ts";
import { restCaller } from "../helpers/rest.ts";

// The file sender (KBS_SENDER=file): the day's list of guest reports, one JSON line per report, in one file per
// property and business date, for hotels that upload it themselves.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;
const dir = mkdtempSync(join(tmpdir(), "kbs-files-"));
let desk: string, manager: string, propertyCode: string;
let fixture: { roomTypeId: string; ratePlanId: string; roomIds: string[] };
let reservations: Client<typeof ReservationService>;

const rest = restCaller(() => app.baseUrl);

beforeAll(async () => {
  app = await startTestApp({ env: { KBS_SENDER: "file", KBS_FILE_DIR: dir } });
  const property = await createTestProperty(app, { businessDate: "2027-03-01" });
  propertyCode = property.code;
  fixture = await doubleRoomsAtBar(app.services.inventory, property.id, roomNumbers(201, 205), 3);
  desk = (await createStaffSession(app, { propertyCode, role: "front_desk" })).accessToken;
  manager = (await createStaffSession(app, { propertyCode, role: "manager" })).accessToken;
  reservations = createClient(ReservationService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
}, 60_000);
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the file sender", () => {
  it("writes the day's list, one line per report, once; marks the reports sent with the file's reference", async () => {
    const guests: string[] = [];
    for (const n of [1, 2]) {
      const g = await rest("POST", "/api/panel/v1/guests", desk, {
        givenName: "Ayse",
        familyName: "Yilmaz",
        nationality: "TR",
        birthDate: "1961-07-23",
        documentType: "PASSPORT",
        documentNumber: `U9876543${n}`,
        documentCountry: "TR",
      });
      guests.push(g.body.guest.id as string);
    }
    const r = await rest("POST", "/api/mobile/v1/reservations", manager, {
      holderName: "Ayse Yilmaz",
      arrivalDate: "2027-03-01",
      departureDate: "2027-03-03",
      roomTypeId: fixture.roomTypeId,
      ratePlanId: fixture.ratePlanId,
      adults: 2,
      totalMinor: 50000,
      currency: "TRY",
    });
    const lineId = r.body.rooms[0].id as string;
    for (const guestId of guests)
      await rest("POST", `/api/panel/v1/reservations/${r.body.id}/rooms/${lineId}/guests`, desk, { guestId });
    await reservations.checkInRoomLine(
      { reservationId: r.body.id, reservationRoomId: lineId, roomId: fixture.roomIds[0]! },
      { headers: bearer(desk) },
    );
    const read = async () =>
      (
        await app.deps.db.pool.query(
          `select id, status, reference from guest_reports where reservation_room_id = $1 order by id`,
          [lineId],
        )
      ).rows as Json[];
    let rows = await read();
    for (let i = 0; i < 100 && !rows.every((x) => x.status === "sent"); i++) {
      await new Promise((res) => setTimeout(res, 200));
      rows = await read();
    }
    expect(rows.map((x) => x.status)).toEqual(["sent", "sent"]);
    const file = join(dir, propertyCode, "2027-03-01.jsonl");
    for (const x of rows) expect(x.reference).toBe(`${propertyCode}/2027-03-01.jsonl#${x.id}`);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    const parsed = lines.map((l) => JSON.parse(l) as Json);
    expect(parsed.map((p) => p.id).sort()).toEqual(rows.map((x) => x.id).sort());
    expect(parsed[0]).toMatchObject({
      propertyCode,
      movement: "check_in",
      roomNumber: "201",
      arrivalDate: "2027-03-01",
      departureDate: "2027-03-03",
      guest: { familyName: "Yilmaz", birthDate: "1961-07-23", nationality: "TR", documentType: "PASSPORT" },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, propertyCode)).mode & 0o777).toBe(0o700);
    // an attempt repeated after a lost outcome does not write the line again
    const again = await createFileSender(dir).send(parsed[0] as never);
    expect(again.reference).toBe(`${propertyCode}/2027-03-01.jsonl#${parsed[0]!.id}`);
    expect(readFileSync(file, "utf8").trimEnd().split("\n")).toHaveLength(2);
  }, 60_000);
});
