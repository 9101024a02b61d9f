import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { AppError, toAppError } from "../../src/errors.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let p1: { id: string; code: string };
let p2: { id: string; code: string };
let sandbox: { id: string; code: string };
let partner: { accessToken: string; clientId: string };
let other: { accessToken: string; clientId: string };
const rt: Record<string, string> = {};

const get = async (token: string, path: string): Promise<{ status: number; body: Json; headers: Headers }> => {
  const res = await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json(), headers: res.headers };
};
const post = async (token: string, path: string, body: unknown, key: string | null = newId()) => {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  if (key !== null) headers["idempotency-key"] = key;
  const res = await fetch(`${app.baseUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
};

beforeAll(async () => {
  app = await startTestApp();
  p1 = await createTestProperty(app, { code: "CON-P1" });
  p2 = await createTestProperty(app, { code: "CON-P2" });
  sandbox = await createTestProperty(app, { code: "CON-SBX" });
  await app.db.pool.query("update properties set sandbox = true where id = $1", [sandbox.id]);
  partner = await createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [p1.code, sandbox.code],
    scopes: ["availability.read", "reservations.read", "mappings.read", "reservations.write"],
  });
  other = await createTestClient(app, {
    kind: "partner",
    provider: "globex",
    propertyCodes: [p2.code],
    scopes: ["availability.read", "reservations.read", "mappings.read"],
  });
  const q = (text: string, params: unknown[]) => app.db.pool.query(text, params);
  for (const [code, count] of [
    ["DBL", 5],
    ["SGL", 3],
  ] as const) {
    rt[code] = newId();
    await q(
      "insert into room_types (id, property_id, code, name, max_occupancy, room_count, created_at) values ($1, $2, $3, $4, 2, $5, now())",
      [rt[code], p1.id, code, `${code} room`, count],
    );
  }
  await q(
    "insert into room_type_days (property_id, room_type_id, date, total, sold, blocked, out_of_order) values ($1, $2, '2027-03-02', 5, 2, 1, 1)",
    [p1.id, rt.DBL],
  );
  await setProviderMapping(app.db.pool, {
    propertyCode: p1.code,
    provider: "acme",
    kind: "room_type",
    code: "DBL",
    externalCode: "ACME-DOUBLE",
  });
  await setProviderMapping(app.db.pool, {
    propertyCode: p1.code,
    provider: "acme",
    kind: "property",
    externalCode: "ACME-HOTEL-1",
  });
});
afterAll(async () => {
  await app?.close();
});

describe("property isolation", () => {
  it("answers 404 for another client's property exactly like for a missing one", async () => {
    for (const path of ["availability?from=2027-03-01&to=2027-03-02", "reservations", "mappings"]) {
      const foreign = await get(partner.accessToken, `/api/v1/properties/${p2.code}/${path}`);
      const missing = await get(partner.accessToken, `/api/v1/properties/NOPE-XX/${path}`);
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(foreign.body.error.code).toBe(missing.body.error.code);
    }
    expect(
      (
        await post(partner.accessToken, `/api/v1/properties/${p2.code}/reservation-events`, {
          eventType: "CANCELLED",
          externalReference: "X",
        })
      ).status,
    ).toBe(404);
    // and the other way round: the second provider's client reaches its own property only
    expect((await get(other.accessToken, `/api/v1/properties/${p1.code}/mappings`)).status).toBe(404);
    expect((await get(other.accessToken, `/api/v1/properties/${p2.code}/mappings`)).status).toBe(200);
  });

  it("lists only the client's own properties in its capabilities", async () => {
    const caps = await get(partner.accessToken, "/api/v1/capabilities");
    expect(caps.status).toBe(200);
    expect(caps.body).toMatchObject({ clientId: partner.clientId, provider: "acme", environment: "test" });
    expect(caps.body.properties.map((p: Json) => p.code)).toEqual([p1.code, sandbox.code]);
    const sbx = caps.body.properties.find((p: Json) => p.code === sandbox.code);
    expect(sbx.capabilities).toContain("reservation-events");
    expect(caps.body.properties.find((p: Json) => p.code === p1.code).capabilities).not.toContain("reservation-events");
  });

  it("needs a token", async () => {
    const res = await fetch(`${app.baseUrl}/api/v1/capabilities`);
    expect(res.status).toBe(401);
  });
});

describe("availability", () => {
  it("returns every day of [from, to) per room type with provider codes", async () => {
    const { status, body } = await get(
      partner.accessToken,
      `/api/v1/properties/${p1.code}/availability?from=2027-03-01&to=2027-03-04`,
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ propertyCode: p1.code, from: "2027-03-01", to: "2027-03-04", toExclusive: true });
    const dbl = body.roomTypes.find((r: Json) => r.code === "DBL");
    expect(dbl.externalCode).toBe("ACME-DOUBLE");
    // availabilityCap: null (no cap; an allotment partner's, allotment.test.ts)
    const day = { total: 5, sold: 0, blocked: 0, outOfOrder: 0, available: 5, overbooked: 0, availabilityCap: null };
    expect(dbl.days).toEqual([
      { ...day, date: "2027-03-01" },
      { ...day, date: "2027-03-02", sold: 2, blocked: 1, outOfOrder: 1, available: 1 },
      { ...day, date: "2027-03-03" },
    ]);
    expect(body.roomTypes.find((r: Json) => r.code === "SGL").externalCode).toBeNull();
  });

  it("filters by our or the provider's room type codes", async () => {
    for (const filter of ["DBL", "ACME-DOUBLE"]) {
      const { body } = await get(
        partner.accessToken,
        `/api/v1/properties/${p1.code}/availability?from=2027-03-01&to=2027-03-02&roomTypes=${filter}`,
      );
      expect(body.roomTypes.map((r: Json) => r.code)).toEqual(["DBL"]);
    }
  });

  it("rejects bad ranges with 400 naming the field", async () => {
    for (const [q, field] of [
      ["from=2027-03-01&to=2028-03-03", "to"],
      ["from=2027-02-30&to=2027-03-01", "from"],
      ["from=2027-03-02&to=2027-03-02", "to"],
    ] as const) {
      const { status, body } = await get(partner.accessToken, `/api/v1/properties/${p1.code}/availability?${q}`);
      expect(status).toBe(400);
      expect(body.error.details[0].field).toBe(field);
    }
  });
});

describe("mappings", () => {
  it("shows the caller's provider codes, and null where unmapped", async () => {
    const { status, body } = await get(partner.accessToken, `/api/v1/properties/${p1.code}/mappings`);
    expect(status).toBe(200);
    expect(body.property).toEqual({ code: p1.code, externalCode: "ACME-HOTEL-1" });
    expect(body.roomTypes).toEqual([
      { code: "DBL", name: "DBL room", externalCode: "ACME-DOUBLE" },
      { code: "SGL", name: "SGL room", externalCode: null },
    ]);
  });
});

describe("mapping maintenance", () => {
  it("refuses unknown entities and a provider code already used for another entity", async () => {
    await expect(
      setProviderMapping(app.db.pool, {
        propertyCode: p1.code,
        provider: "acme",
        kind: "room_type",
        code: "NOPE",
        externalCode: "X",
      }),
    ).rejects.toBeInstanceOf(AppError);
    const dup = await setProviderMapping(app.db.pool, {
      propertyCode: p1.code,
      provider: "acme",
      kind: "room_type",
      code: "SGL",
      externalCode: "ACME-DOUBLE",
    }).catch((e: unknown) => toAppError(e));
    expect((dup as AppError).code).toBe("conflict");
  });
});

describe("reservation change feed", () => {
  it("pages in change order with opaque cursors and never skips a later change", async () => {
    const q = (text: string, params: unknown[]) => app.db.pool.query(text, params);
    for (let i = 1; i <= 5; i++) {
      await q(
        `insert into reservations (id, property_id, code, status, source, channel, external_reference, holder_name, arrival_date, departure_date, adults, children, total_minor, currency, created_at, updated_at, change_seq)
         values ($1, $2, $3, 'GUARANTEED', 'CHANNEL', 'acme', $4, 'Secret Guest', '2027-04-01', '2027-04-03', 2, 0, 1000, 'TRY', now(), now(), $5)`,
        [newId(), p1.id, `R${i}`, `EXT-${i}`, i],
      );
    }
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const { status, body } = await get(
        partner.accessToken,
        `/api/v1/properties/${p1.code}/reservations?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(status).toBe(200);
      seen.push(...body.data.map((r: Json) => r.code));
      cursor = body.nextCursor;
      if (!body.hasMore) break;
    }
    expect(seen).toEqual(["R1", "R2", "R3", "R4", "R5"]);
    const first = (await get(partner.accessToken, `/api/v1/properties/${p1.code}/reservations?limit=1`)).body.data[0];
    expect(Object.keys(first).sort()).toEqual([
      "adults",
      "arrivalDate",
      "cancelledAt",
      "channel",
      "children",
      "code",
      "createdAt",
      "departureDate",
      "externalReference",
      "id",
      "roomTypeCodes",
      "roomTypes",
      "source",
      "status",
      "updatedAt",
    ]);
    expect(JSON.stringify(first)).not.toContain("Secret Guest");
    // a change committed after the walk shows up from the last cursor
    await q(
      "update reservations set change_seq = 6, status = 'CANCELLED', cancelled_at = now() where code = 'R2' and property_id = $1",
      [p1.id],
    );
    const later = await get(partner.accessToken, `/api/v1/properties/${p1.code}/reservations?cursor=${cursor}`);
    expect(later.body.data.map((r: Json) => [r.code, r.status])).toEqual([["R2", "CANCELLED"]]);
    expect(later.body.data[0].cancelledAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("rejects a forged cursor and an out-of-range limit", async () => {
    expect((await get(partner.accessToken, `/api/v1/properties/${p1.code}/reservations?cursor=abc`)).status).toBe(400);
    expect((await get(partner.accessToken, `/api/v1/properties/${p1.code}/reservations?limit=501`)).status).toBe(400);
  });

  it("needs the reservations.read scope", async () => {
    const narrow = await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [p1.code],
      scopes: ["availability.read"],
    });
    expect((await get(narrow.accessToken, `/api/v1/properties/${p1.code}/reservations`)).status).toBe(403);
  });
});

describe("reservation events", () => {
  const event = {
    eventType: "NEW",
    externalReference: "BK-77",
    channel: "Booking.com",
    arrivalDate: "2027-05-01",
    departureDate: "2027-05-03",
    rooms: [{ roomTypeCode: "ACME-DOUBLE", ratePlanCode: "BAR", adults: 2, children: 0, amountMinor: 40000 }],
    totalMinor: 40000,
    currency: "TRY",
    holder: { name: "A Guest" },
  };

  it("refuses live writes before approval (403 partner_not_approved)", async () => {
    const res = await post(partner.accessToken, `/api/v1/properties/${p1.code}/reservation-events`, event);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("partner_not_approved");
  });

  it("queues an event for the sandbox property (202) and shows its outcome to its own client only", async () => {
    const res = await post(partner.accessToken, `/api/v1/properties/${sandbox.code}/reservation-events`, event);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ eventId: expect.any(String), status: "QUEUED" });
    const jobs = await app.db.pool.query(
      "select count(*)::int as n from pgboss.job where name = 'connectivity.reservation-events' and data->>'eventId' = $1",
      [res.body.eventId],
    );
    expect(jobs.rows[0].n).toBe(1);
    const outcome = await get(
      partner.accessToken,
      `/api/v1/properties/${sandbox.code}/reservation-events/${res.body.eventId}`,
    );
    expect(outcome.status).toBe(200);
    expect(outcome.body.eventId).toBe(res.body.eventId);
    expect(["QUEUED", "PROCESSED", "REJECTED"]).toContain(outcome.body.status);
    expect(
      (await get(partner.accessToken, `/api/v1/properties/${sandbox.code}/reservation-events/${newId()}`)).status,
    ).toBe(404);
    expect(
      (await get(partner.accessToken, `/api/v1/properties/${sandbox.code}/reservation-events/not-a-uuid`)).status,
    ).toBe(404);
  });

  it("validates the body with 422 and field details", async () => {
    const res = await post(partner.accessToken, `/api/v1/properties/${sandbox.code}/reservation-events`, {
      ...event,
      departureDate: "2027-04-01",
      totalMinor: 5,
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: Json) => d.field).sort()).toEqual(["departureDate", "totalMinor"]);
  });
});

describe("platform switch", () => {
  it("turns every connectivity endpoint to 503 while /status stays up and says disabled", async () => {
    await app.db.pool.query("update platform_settings set partner_api_enabled = false");
    try {
      const res = await get(partner.accessToken, "/api/v1/capabilities");
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBeTruthy();
      const token = await fetch(`${app.baseUrl}/api/v1/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      });
      expect(token.status).toBe(503);
      expect(await (await fetch(`${app.baseUrl}/api/v1/status`)).json()).toMatchObject({ partnerApi: "disabled" });
    } finally {
      await app.db.pool.query("update platform_settings set partner_api_enabled = true");
    }
  });
});
