import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let deskToken: string;
let viewerToken: string;

const photo = (name: string, type = "image/jpeg"): Blob =>
  new Blob([readFileSync(new URL(`../fixtures/identity/${name}`, import.meta.url))], { type });

async function scan(
  parts: [string, string | Blob, string?][],
  token: string | null = deskToken,
  extra: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const form = new FormData();
  for (const [name, value, filename] of parts) {
    if (typeof value === "string") form.append(name, value);
    else form.append(name, value, filename ?? "photo.jpg");
  }
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/identity-scan`, {
    method: "POST",
    body: form,
    headers: { ...extra, ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), headers: res.headers };
}

beforeAll(async () => {
  app = await startTestApp();
  await createTestProperty(app, { code: "IDS-A" });
  deskToken = (await createStaffSession(app, { propertyCode: "IDS-A", role: "front_desk" })).accessToken;
  viewerToken = (await createStaffSession(app, { propertyCode: "IDS-A", role: "viewer" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("POST /api/mobile/v1/identity-scan", () => {
  it("reads a passport photo and answers the fields with validity flags, no-store", { timeout: 60_000 }, async () => {
    // an Idempotency-Key is accepted, but the extracted personal data is never kept for a replay
    const key = "scan-key-1";
    const res = await scan(
      [
        ["documentType", "PASSPORT"],
        ["images", photo("passport-td3.jpg"), "passport.jpg"],
      ],
      deskToken,
      { "idempotency-key": key },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(
      (await app.db.pool.query("select count(*)::int as n from idempotency_keys where key = $1", [key])).rows[0].n,
    ).toBe(0);
    expect(res.body).toEqual({
      documentType: "PASSPORT",
      mrzFormat: "TD3",
      valid: true,
      documentNumber: { value: "L898902C3", valid: true, corrected: false },
      surname: { value: "ERIKSSON", valid: true, corrected: false },
      givenNames: { value: "ANNA MARIA", valid: true, corrected: false },
      nationality: { value: "UTO", valid: true, corrected: false },
      issuingState: { value: "UTO", valid: true, corrected: false },
      birthDate: { value: "1974-08-12", valid: true, corrected: false },
      sex: { value: "F", valid: true, corrected: false },
      expiryDate: { value: "2012-04-15", valid: true, corrected: false },
      tcIdentityNumber: null,
      expired: true,
      // nothing saved without saveToRoomLine (test/guests/scan-save.test.ts)
      guest: null,
      guestCreated: false,
      problems: [],
    });
  });

  it(
    "reads a TC kimlik card from its front (PNG) and back (WebP), whatever types the client declares",
    { timeout: 60_000 },
    async () => {
      const res = await scan([
        ["documentType", "TC_KIMLIK"],
        ["images", photo("tc-kimlik-front.png", "application/octet-stream"), "front.jpg"],
        ["images", photo("tc-kimlik-back.webp", "image/jpeg"), "back.jpg"],
      ]);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        documentType: "TC_KIMLIK",
        mrzFormat: "TD1",
        valid: true,
        tcIdentityNumber: { value: "10000000146", valid: true },
        documentNumber: { value: "A01B23456", valid: true },
        surname: { value: "YILMAZ" },
        givenNames: { value: "AYSE GUL" },
        nationality: { value: "TUR" },
        expired: false,
        problems: [],
      });
    },
  );

  it("answers 200 with valid false and the failed check for a bad check digit", { timeout: 60_000 }, async () => {
    const res = await scan([
      ["documentType", "PASSPORT"],
      ["images", photo("passport-td3-bad-check.png", "image/png"), "p.png"],
    ]);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.documentNumber).toEqual({ value: "L898902C3", valid: false, corrected: false });
    expect(res.body.problems).toEqual([
      { field: "documentNumber", reason: "check digit does not match" },
      { field: "composite", reason: "check digit does not match" },
    ]);
  });

  it("answers 400 with details for a wrong number of images or an unknown document type", async () => {
    const one = await scan([
      ["documentType", "TC_KIMLIK"],
      ["images", photo("tc-kimlik-back.webp", "image/webp")],
    ]);
    expect(one.status).toBe(400);
    expect(one.body.error).toMatchObject({
      code: "invalid_argument",
      details: [{ field: "images", reason: "TC_KIMLIK needs exactly 2" }],
    });
    expect(one.headers.get("cache-control")).toBe("no-store");
    const none = await scan([["documentType", "PASSPORT"]]);
    expect(none.status).toBe(400);
    const unknown = await scan([
      ["documentType", "ID_CARD"],
      ["images", photo("passport-td3.jpg")],
    ]);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([
      { field: "documentType", reason: "must be one of TC_KIMLIK, PASSPORT" },
    ]);
  });

  it("answers 415 for a PDF named .jpg and declared image/jpeg", async () => {
    const res = await scan([
      ["documentType", "PASSPORT"],
      ["images", photo("not-an-image.jpg", "image/jpeg"), "scan.jpg"],
    ]);
    expect(res.status).toBe(415);
    expect(res.body.error).toMatchObject({
      code: "unsupported_media_type",
      details: [{ field: "images[0]", reason: "is not a JPEG, PNG or WebP image" }],
    });
  });

  it("answers 413 for a 7 MiB photo", async () => {
    const big = new Uint8Array(7 * 1024 * 1024);
    big.set([0xff, 0xd8, 0xff, 0xe0]);
    const res = await scan([
      ["documentType", "PASSPORT"],
      ["images", new Blob([big], { type: "image/jpeg" }), "big.jpg"],
    ]);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  it("answers 415 for a JSON body (multipart only)", async () => {
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/identity-scan`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${deskToken}` },
      body: JSON.stringify({ documentType: "PASSPORT" }),
    });
    expect(res.status).toBe(415);
  });

  it("answers 401 without a token, 403 without frontdesk.check_in, 403 for a partner client", async () => {
    const parts: [string, string | Blob, string?][] = [
      ["documentType", "PASSPORT"],
      ["images", photo("passport-td3.jpg")],
    ];
    const anonymous = await scan(parts, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("unauthorized");
    const viewer = await scan(parts, viewerToken);
    expect(viewer.status).toBe(403);
    expect(viewer.body.error.code).toBe("forbidden");
    const partner = await createTestClient(app, { propertyCodes: ["IDS-A"], scopes: ["reservations.read"] });
    expect((await scan(parts, partner.accessToken)).status).toBe(403);
  });
});
