import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { createTestClient } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { personalDataIn } from "../helpers/personal-data.ts";
import { smallHotel } from "../helpers/small-hotel.ts";

// The whole suite's log lines are scanned at the end of the run (test/global-setup.ts); this file drives the
// calls that carry the most personal data at trace level and checks the lines right away.
let app: App;
let base: string;
const lines: string[] = [];

beforeAll(async () => {
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(
        ...chunk
          .toString("utf8")
          .split("\n")
          .filter((l) => l !== ""),
      );
      done();
    },
  });
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: await freshDatabaseUrl(),
    SHUTDOWN_GRACE_MS: "2000",
    RATE_LIMIT_AUTH_PER_MINUTE: "1000",
  });
  app = await createApp(config, { logger: createLogger("trace", capture) });
  base = `http://127.0.0.1:${app.port}`;
});
afterAll(async () => {
  await app?.close();
});

const json = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe("logs carry no personal data", () => {
  it("logins, tokens, guest names and refused input leave no e-mail, password, token or name in any line", async () => {
    const hotel = await smallHotel(app, base);
    const email = hotel.manager.email;
    const wrong = await json("/api/mobile/v1/auth/login", {
      hotelCode: hotel.property.code,
      email,
      password: "wrong-pass-2026",
      deviceId: "d1",
      deviceName: "phone",
    });
    expect(wrong.status).toBe(401);
    const login = await json("/api/mobile/v1/auth/login", {
      hotelCode: hotel.property.code,
      email,
      password: "test-pass-2026",
      deviceId: "d1",
      deviceName: "phone",
    });
    expect(login.status).toBe(200);
    const session = (await login.json()) as { tokens: { accessToken: string; refreshToken: string } };
    const refreshed = await json("/api/mobile/v1/auth/refresh", { refreshToken: session.tokens.refreshToken });
    expect(refreshed.status).toBe(200);
    // the spent refresh token again: refused (and the session revoked)
    expect((await json("/api/mobile/v1/auth/refresh", { refreshToken: session.tokens.refreshToken })).status).toBe(401);

    expect((await hotel.createReservation(hotel.stay({ holderName: "Ayse Yilmaz" }))).status).toBe(201);
    // refused input that carries a name and an e-mail
    const bad = await hotel.createReservation(
      hotel.stay({ holderName: "Ayse Yilmaz", notes: `call ${email}`, adults: -1 }),
    );
    expect(bad.status).toBe(400);
    const unknownField = await hotel.createReservation({
      ...hotel.stay({ holderName: "Ayse Yilmaz" }),
      guestEmail: email,
    });
    expect(unknownField.status).toBe(400);

    await setProviderMapping(app.deps.db.pool, {
      propertyCode: hotel.property.code,
      provider: "acme",
      kind: "room_type",
      code: "DBL",
      externalCode: "X-DBL",
    });
    const partner = await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [hotel.property.code],
      scopes: ["reservations.write"],
      approved: true,
    });
    const event = await json(
      `/api/v1/properties/${hotel.property.code}/reservation-events`,
      {
        eventType: "NEW",
        externalReference: "PII-1",
        channel: "Booking.com",
        arrivalDate: "2027-03-10",
        departureDate: "2027-03-11",
        currency: "TRY",
        holder: { name: "Channel Guest" },
        rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "UNMAPPED", adults: 2, children: 0, amountMinor: 25000 }],
        totalMinor: 25000,
      },
      { authorization: `Bearer ${partner.accessToken}`, "idempotency-key": newId() },
    );
    expect(event.status).toBe(202);
    const token = await fetch(`${base}/api/v1/oauth/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${partner.clientId}:not-the-secret`).toString("base64")}`,
      },
      body: "grant_type=client_credentials",
    });
    expect(token.status).toBe(401);
    // the rejected event's processing (a worker line) is part of what is checked
    await new Promise((r) => setTimeout(r, 1_000));

    expect(lines.length).toBeGreaterThan(8);
    // the scan itself finds what it looks for
    expect(
      personalDataIn([
        JSON.stringify({ email, holder: "Ayse Yilmaz", rt: session.tokens.refreshToken, tc: 10000000146 }),
      ]),
    ).toHaveLength(4);
    expect(lines.some((l) => l.includes("CreateMobileReservation"))).toBe(true);
    const leaks = personalDataIn(lines);
    for (const secret of [
      session.tokens.accessToken,
      session.tokens.refreshToken,
      partner.accessToken,
      partner.clientSecret,
    ]) {
      if (lines.some((l) => l.includes(secret))) leaks.push("a token or secret");
    }
    expect(leaks).toEqual([]);
  });
});
