import { randomBytes } from "node:crypto";
import type { App } from "../../src/app.ts";
import { findUserByEmail } from "../../src/modules/properties/index.ts";

type AppLike = Pick<App, "deps" | "services">;

const suffix = (): string => randomBytes(4).toString("hex").toUpperCase();

/** A property of its own (group TEST, currency TRY, scale 100, Europe/Istanbul) unless told otherwise. */
export async function createTestProperty(
  app: AppLike,
  opts: {
    code?: string;
    groupCode?: string;
    currency?: string;
    amountScale?: number;
    timeZone?: string;
    businessDate?: string;
    emailVerification?: boolean;
    sandbox?: boolean;
  } = {},
): Promise<{
  id: string;
  code: string;
  currency: string;
  amountScale: number;
  timeZone: string;
  businessDate: string;
}> {
  const admin = app.services.admin;
  const p = await admin.createProperty({
    groupCode: opts.groupCode ?? "TEST",
    code: opts.code ?? `P-${suffix()}`,
    name: `Test property ${opts.code ?? ""}`.trim(),
    timeZone: opts.timeZone ?? "Europe/Istanbul",
    currency: opts.currency ?? "TRY",
    amountScale: opts.amountScale ?? 100,
    ...(opts.businessDate !== undefined ? { businessDate: opts.businessDate } : {}),
    emailVerification: opts.emailVerification ?? false,
    sandbox: opts.sandbox ?? false,
  });
  return {
    id: p.id,
    code: p.code,
    currency: p.currency,
    amountScale: p.amountScale,
    timeZone: p.timeZone,
    businessDate: p.businessDate,
  };
}

/**
 * An OAuth client with a fresh access token (issued by the same code as POST /api/v1/oauth/token).
 * `approved: true` moves it to the live environment.
 */
export async function createTestClient(
  app: AppLike,
  opts: {
    kind?: "partner" | "internal";
    provider?: string;
    propertyCodes: string[];
    scopes: string[];
    approved?: boolean;
  },
): Promise<{ clientId: string; clientSecret: string; accessToken: string }> {
  const admin = app.services.admin;
  const { client, clientSecret } = await admin.createClient({
    kind: opts.kind ?? "partner",
    provider: opts.provider ?? "testprov",
    propertyCodes: opts.propertyCodes,
    scopes: opts.scopes,
  });
  if (opts.approved === true) await admin.approveClient(client.id);
  const basic = `Basic ${Buffer.from(`${client.id}:${clientSecret}`).toString("base64")}`;
  const token = await app.services.auth.clientTokens.createToken({
    authorization: basic,
    grantType: "client_credentials",
    scope: "",
    clientId: "",
    clientSecret: "",
  });
  return { clientId: client.id, clientSecret, accessToken: token.accessToken };
}

/**
 * A hotel user (created unless `email` exists) with `role` in the property, and an open staff session whose
 * active property it is.
 */
export async function createStaffSession(
  app: AppLike,
  opts: { propertyCode: string; role: string; email?: string; password?: string; deviceId?: string },
): Promise<{
  accessToken: string;
  refreshToken: string;
  userId: string;
  propertyId: string;
  sessionId: string;
  email: string;
}> {
  const admin = app.services.admin;
  const email = opts.email ?? `user-${suffix().toLowerCase()}@test.test`;
  const existing = await findUserByEmail(app.deps.db, email);
  const userId =
    existing?.id ??
    (await admin.createUser({ email, name: "Test User", password: opts.password ?? "test-pass-2026" })).id;
  const membership = await admin.createMembership({ email, propertyCode: opts.propertyCode, role: opts.role });
  const tokens = await app.services.auth.sessions.openStaffSession({
    userId,
    propertyId: membership.propertyId,
    deviceId: opts.deviceId ?? "test-device",
    deviceName: "Test device",
  });
  return {
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    userId,
    propertyId: membership.propertyId,
    sessionId: tokens.sessionId,
    email,
  };
}

/** `{ authorization: "Bearer ..." }` for fetch or Connect headers. */
export function bearer(accessToken: string): { authorization: string } {
  return { authorization: `Bearer ${accessToken}` };
}
