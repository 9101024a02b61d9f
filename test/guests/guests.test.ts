import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { AuditService } from "../../gen/hotelops/audit/v1/audit_pb.js";
import { GuestService } from "../../gen/hotelops/guest/v1/guest_pb.js";
import { createGuestService } from "../../src/modules/guests/guests.service.ts";
import { createGuestVault } from "../../src/modules/guests/vault.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { restCaller } from "../helpers/rest.ts";

// Guest profiles over REST (/api/panel/v1/guests), Connect and gRPC (GuestService): shared by a hotel group, 404
// from another group, sensitive fields sealed at rest, masked without guests.read_sensitive, every full read in
// the audit trail. The run's log scan (test/helpers/personal-data.ts) looks for the names and numbers used here.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const keyA = randomBytes(32);
const tcNumber = "10000000146"; // passes the TC check digits
const passport = "U98765432";
let app: TestApp;
let databaseUrl: string;
let propertyA: { id: string; code: string }, propertyA2: { code: string }, propertyB: { code: string };
let managerA: string, frontDeskA: string, managerA2: string, managerB: string;
let connect: Client<typeof GuestService>, grpc: Client<typeof GuestService>;
let connectAudit: Client<typeof AuditService>;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({ databaseUrl, env: { GUEST_DATA_KEY: keyA.toString("hex") } });
  const group = `G-${randomBytes(3).toString("hex")}`;
  propertyA = await createTestProperty(app, { groupCode: group });
  propertyA2 = await createTestProperty(app, { groupCode: group });
  propertyB = await createTestProperty(app, { groupCode: `${group}-OTHER` });
  const session = async (code: string, role: string) =>
    (await createStaffSession(app, { propertyCode: code, role })).accessToken;
  [managerA, frontDeskA, managerA2, managerB] = await Promise.all([
    session(propertyA.code, "manager"),
    session(propertyA.code, "front_desk"),
    session(propertyA2.code, "manager"),
    session(propertyB.code, "manager"),
  ]);
  const c = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
  connect = createClient(GuestService, c);
  connectAudit = createClient(AuditService, c);
  grpc = createClient(GuestService, createGrpcTransport({ baseUrl: app.baseUrl }));
});
afterAll(async () => {
  await app?.close();
});

const rest = restCaller(() => app.baseUrl);

const ayse = {
  givenName: "Ayse",
  familyName: "Yilmaz",
  nationality: "TR",
  birthDate: "1961-07-23",
  documentType: "TC_KIMLIK",
  documentNumber: tcNumber,
  documentCountry: "TR",
  email: "ayse.yilmaz@example.com",
  phone: "+905321234567",
  address: "Kadikoy, Istanbul",
  language: "tr",
  notes: "prefers a quiet room",
};

async function createAyse(): Promise<string> {
  const r = await rest("POST", "/api/panel/v1/guests", frontDeskA, ayse);
  expect(r.status).toBe(201);
  return r.body.guest.id as string;
}

function errorField(e: unknown): string | undefined {
  return (e as ConnectError).findDetails(ErrorInfoSchema)[0]?.details[0]?.field;
}

describe("profiles over REST", () => {
  it("creates a guest and answers it masked", async () => {
    const r = await rest("POST", "/api/panel/v1/guests", frontDeskA, ayse);
    expect(r.status).toBe(201);
    expect(r.body.guest).toMatchObject({
      givenName: "Ayse",
      familyName: "Yilmaz",
      nationality: "TR",
      documentType: "TC_KIMLIK",
      documentNumber: "10*******46",
      birthDate: "****-**-**",
      email: "a***@example.com",
      phone: "+90********67",
      address: "***",
      notes: "***",
      masked: true,
    });
  });

  it("answers in full with guests.read_sensitive and records the read; masked without, unrecorded", async () => {
    const id = await createAyse();
    const full = await rest("GET", `/api/panel/v1/guests/${id}`, managerA);
    expect(full.status).toBe(200);
    expect(full.body.guest).toMatchObject({ ...ayse, id, masked: false });
    const masked = await rest("GET", `/api/panel/v1/guests/${id}`, frontDeskA);
    expect(masked.status).toBe(200);
    expect(masked.body.guest).toMatchObject({ documentNumber: "10*******46", masked: true });
    const trail = await connectAudit.listChanges({ entityType: "guest", entityId: id }, { headers: bearer(managerA) });
    expect(trail.changes.map((c) => c.action)).toEqual(["read_sensitive", "create"]);
    expect(trail.changes[0]!.face).toBe("rest");
    const created = trail.changes[1]!;
    expect(created.changes.find((f) => f.field === "documentNumber")?.masked).toBe(true);
    expect(created.changes.find((f) => f.field === "givenName")?.masked).toBe(true);
    expect(JSON.stringify(trail, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toMatch(
      /Yilmaz|10000000146|ayse\.yilmaz/,
    );
  });

  it("updates the fields given and keeps the others", async () => {
    const id = await createAyse();
    const r = await rest("PATCH", `/api/panel/v1/guests/${id}`, frontDeskA, { email: "ayse@example.org", notes: "" });
    expect(r.status).toBe(200);
    expect(r.body.guest.email).toBe("a***@example.org");
    const full = await rest("GET", `/api/panel/v1/guests/${id}`, managerA);
    expect(full.body.guest).toMatchObject({ email: "ayse@example.org", notes: "", phone: ayse.phone });
  });

  it("finds guests by document number (spaces ignored) and by name (case, accents and dotless i ignored)", async () => {
    const id = await createAyse();
    const byNumber = await rest(
      "GET",
      `/api/panel/v1/guests?documentNumber=${encodeURIComponent("100 000 001 46")}`,
      frontDeskA,
    );
    expect(byNumber.status).toBe(200);
    expect(byNumber.body.guests.map((g: Json) => g.id)).toContain(id);
    expect(byNumber.body.guests.every((g: Json) => g.masked === true)).toBe(true);
    // the front desk's phone finds the guest by the number on the card in hand
    const onPhone = await rest("GET", "/api/mobile/v1/guests?documentNumber=10000000146", frontDeskA);
    expect(onPhone.status).toBe(200);
    expect(onPhone.body.guests.map((g: Json) => g.id)).toContain(id);
    const byName = await rest("GET", `/api/panel/v1/guests?name=${encodeURIComponent("AYŞE yıl")}`, frontDeskA);
    expect(byName.body.guests.map((g: Json) => g.id)).toContain(id);
    const none = await rest("GET", `/api/panel/v1/guests?name=${encodeURIComponent("yil ayset")}`, frontDeskA);
    expect(none.body.guests).toEqual([]);
  });

  it("refuses bad fields naming the field, never echoing the value (400)", async () => {
    const r = await rest("POST", "/api/panel/v1/guests", frontDeskA, { ...ayse, documentNumber: "10000000147" });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_argument");
    expect(r.body.error.details).toEqual([
      { field: "documentNumber", reason: "is not a valid TC identity number (11 digits, check digits)" },
    ]);
    expect(JSON.stringify(r.body)).not.toContain("10000000147");
    const many = await rest("POST", "/api/panel/v1/guests", frontDeskA, {
      givenName: "Ayse",
      familyName: "Yilmaz",
      birthDate: "2999-01-01",
      phone: "0532",
      email: "nope",
    });
    expect(many.status).toBe(400);
    expect(many.body.error.details.map((d: Json) => d.field)).toEqual(["birthDate", "email", "phone"]);
    const search = await rest("GET", "/api/panel/v1/guests", frontDeskA);
    expect(search.status).toBe(400);
  });

  it("needs frontdesk.check_in to create (403 for a viewer)", async () => {
    const viewer = (await createStaffSession(app, { propertyCode: propertyA.code, role: "viewer" })).accessToken;
    expect((await rest("POST", "/api/panel/v1/guests", viewer, ayse)).status).toBe(403);
  });
});

describe("the hotel group and property isolation", () => {
  it("another property of the group sees the guest; another group's property gets 404 on every face", async () => {
    const id = await createAyse();
    expect((await rest("GET", `/api/panel/v1/guests/${id}`, managerA2)).body.guest.familyName).toBe("Yilmaz");

    expect((await rest("GET", `/api/panel/v1/guests/${id}`, managerB)).status).toBe(404);
    expect((await rest("PATCH", `/api/panel/v1/guests/${id}`, managerB, { notes: "x" })).status).toBe(404);
    const search = await rest("GET", `/api/panel/v1/guests?documentNumber=${tcNumber}`, managerB);
    expect(search.body.guests).toEqual([]);
    for (const client of [connect, grpc]) {
      const err = await client.getGuest({ guestId: id }, { headers: bearer(managerB) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.NotFound);
      // naming the other property from A's session is 404 too
      const named = await client
        .getGuest({ propertyCode: propertyB.code, guestId: id }, { headers: bearer(managerA) })
        .catch((e: unknown) => e);
      expect((named as ConnectError).code).toBe(Code.NotFound);
      const update = await client
        .updateGuest({ guestId: id, notes: "x" }, { headers: bearer(managerB) })
        .catch((e: unknown) => e);
      expect((update as ConnectError).code).toBe(Code.NotFound);
      expect((await client.searchGuests({ documentNumber: tcNumber }, { headers: bearer(managerB) })).guests).toEqual(
        [],
      );
    }
    expect((await rest("GET", `/api/panel/v1/guests/${id}?propertyCode=${propertyB.code}`, managerA)).status).toBe(404);
  });
});

describe("search pages", () => {
  it("REST, Connect and gRPC: a search answers `limit` guests and a cursor that leads to the rest, none twice", async () => {
    const ids: string[] = [];
    for (const given of ["Ada", "Bora", "Cem"]) {
      const r = await rest("POST", "/api/panel/v1/guests", frontDeskA, {
        givenName: given,
        familyName: "Sayfaoglu",
        nationality: "TR",
      });
      expect(r.status).toBe(201);
      ids.push(r.body.guest.id as string);
    }
    const first = await rest("GET", "/api/panel/v1/guests?name=sayfaoglu&limit=2", frontDeskA);
    expect(first.body.guests.map((g: Json) => g.id)).toEqual(ids.slice(0, 2));
    const rest2 = await rest(
      "GET",
      `/api/panel/v1/guests?name=sayfaoglu&limit=2&cursor=${first.body.nextCursor as string}`,
      frontDeskA,
    );
    expect([rest2.body.guests.map((g: Json) => g.id), rest2.body.nextCursor ?? ""]).toEqual([ids.slice(2), ""]);
    for (const client of [connect, grpc]) {
      const seen: string[] = [];
      let cursor = "";
      do {
        const page = await client.searchGuests(
          { name: "sayfaoglu", limit: 1, cursor },
          { headers: bearer(frontDeskA) },
        );
        seen.push(...page.guests.map((g) => g.id));
        cursor = page.nextCursor;
      } while (cursor !== "");
      expect(seen).toEqual(ids);
      const forged = Buffer.from(JSON.stringify(["a", "b", "not-an-id"])).toString("base64url");
      const bad = await client
        .searchGuests({ name: "sayfaoglu", cursor: forged }, { headers: bearer(frontDeskA) })
        .catch((e: unknown) => e as ConnectError);
      expect(errorField(bad)).toBe("cursor");
    }
  });
});

describe("profiles over Connect and gRPC", () => {
  for (const face of ["connect", "grpc"] as const) {
    it(`${face}: create, full and masked reads, search, update, bad input`, async () => {
      const client = face === "connect" ? connect : grpc;
      const number = face === "connect" ? passport : "U98765433";
      const created = await client.createGuest(
        {
          givenName: "Second",
          familyName: "Sleeper",
          documentType: "PASSPORT",
          documentNumber: number,
          documentCountry: "DE",
          birthDate: "1961-07-23",
        },
        { headers: bearer(frontDeskA) },
      );
      const id = created.guest!.id;
      expect(created.guest!.documentNumber).toBe(`U9*****${number.slice(-2)}`);
      const full = await client.getGuest({ guestId: id }, { headers: bearer(managerA) });
      expect(full.guest).toMatchObject({ documentNumber: number, birthDate: "1961-07-23", masked: false });
      const masked = await client.getGuest({ guestId: id }, { headers: bearer(frontDeskA) });
      expect(masked.guest).toMatchObject({ documentNumber: `U9*****${number.slice(-2)}`, masked: true });
      const found = await client.searchGuests(
        { documentNumber: number.toLowerCase() },
        { headers: bearer(frontDeskA) },
      );
      expect(found.guests.map((g) => g.id)).toEqual([id]);
      const updated = await client.updateGuest(
        { guestId: id, phone: "+4915112345678" },
        { headers: bearer(frontDeskA) },
      );
      expect(updated.guest!.phone).toBe("+49*********78");
      const trail = await connectAudit.listChanges(
        { entityType: "guest", entityId: id },
        { headers: bearer(managerA) },
      );
      expect(trail.changes.map((c) => [c.action, c.face])).toEqual([
        ["modify", face],
        ["read_sensitive", face],
        ["create", face],
      ]);
      const bad = await client
        .createGuest(
          { givenName: "Second", familyName: "Sleeper", nationality: "Turkey" },
          { headers: bearer(frontDeskA) },
        )
        .catch((e: unknown) => e);
      expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
      expect(errorField(bad)).toBe("nationality");
    });
  }
});

describe("at rest", () => {
  it("keeps the sensitive fields sealed and the document number only as a keyed hash", async () => {
    const id = await createAyse();
    const [row] = (await app.deps.db.pool.query(`select * from guests where id = $1`, [id])).rows as Json[];
    const text = JSON.stringify(row);
    for (const value of [tcNumber, ayse.email, ayse.phone, ayse.birthDate, ayse.address, ayse.notes])
      expect(text).not.toContain(value);
    expect(row!.sealed).toMatch(/^g1\./);
    expect((row!.document_hash as Buffer).length).toBe(32);
  });

  it("a key rotation: the new key reads and finds the old rows with the old one as previous, then re-seals them", async () => {
    const id = await createAyse();
    const keyB = randomBytes(32);
    const deps = { transact: app.deps.transact, pool: app.deps.db.pool, clock: app.deps.clock };
    const during = createGuestService({ ...deps, vault: createGuestVault(keyB, [keyA]) });
    const scope = await during.scopeOf(propertyA.id);
    expect((await during.get(scope, id, true)).documentNumber).toBe(tcNumber);
    expect(
      (await during.search(scope, { documentNumber: tcNumber, name: "", limit: 50, cursor: "" })).guests.map(
        (g) => g.id,
      ),
    ).toContain(id);
    // the operator's command, with the new key current and the old one previous
    const { stdout } = await promisify(execFile)(process.execPath, ["src/ops/cli.ts", "guests:rotate-key", "--json"], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: "silent",
        GUEST_DATA_KEY: keyB.toString("base64"),
        GUEST_DATA_PREVIOUS_KEYS: keyA.toString("hex"),
      },
      timeout: 60_000,
    });
    expect((JSON.parse(stdout) as { resealed: number }).resealed).toBeGreaterThan(0);
    expect(await during.rotateKeys()).toBe(0);
    const after = createGuestService({ ...deps, vault: createGuestVault(keyB) });
    expect((await after.get(scope, id, false)).familyName).toBe("Yilmaz");
    expect(
      (await after.search(scope, { documentNumber: tcNumber, name: "", limit: 50, cursor: "" })).guests.map(
        (g) => g.id,
      ),
    ).toContain(id);
    const old = createGuestService({ ...deps, vault: createGuestVault(keyA) });
    await expect(old.get(scope, id, false)).rejects.toThrow(/not configured/);
  }, 90_000);
});
