import { errorFromResponse, HotelOpsError } from "./errors.ts";
import {
  createMobileSession,
  type MobileSession,
  type MobileSessionOptions,
  type SessionTokens,
  type StaffProfile,
} from "./mobile-session.ts";

/** Everything of a MobileSession's options except the pair and the device, which login or verify supply. */
export type StaffSessionOptions = Omit<MobileSessionOptions, "tokens" | "deviceId">;

export interface StaffLoginRequest extends StaffSessionOptions {
  /** Group code or property code of the hotel. */
  hotelCode: string;
  email: string;
  password: string;
  /** A stable id of this installation (UUID) and a label the user recognizes, recorded on the session. */
  deviceId: string;
  deviceName: string;
}

/** E-mail verification is on: a code went to `maskedEmail`; pass it to `verifyStaffLogin` before `expiresAt`. */
export interface LoginChallenge {
  challengeId: string;
  maskedEmail: string;
  /** ISO 8601 time after which the code is refused. */
  expiresAt: string;
}

/** A signed-in staff user: the refreshing session and the profile. */
export interface StaffSignIn {
  session: MobileSession;
  profile: StaffProfile;
}

export type StaffLoginResult = ({ kind: "session" } & StaffSignIn) | ({ kind: "challenge" } & LoginChallenge);

async function post(
  baseUrl: string,
  path: string,
  body: object,
  doFetch: typeof globalThis.fetch,
): Promise<Record<string, unknown>> {
  const res = await doFetch(new URL(path, baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw await errorFromResponse(res);
  return (await res.json()) as Record<string, unknown>;
}

function signIn(opts: StaffSessionOptions & { deviceId: string }, body: Record<string, unknown>): StaffSignIn {
  const tokens = body.tokens as SessionTokens | null | undefined;
  if (tokens == null || typeof tokens.accessToken !== "string")
    throw new HotelOpsError({ status: 200, code: "invalid_response", message: "The answer carries no token pair." });
  return { session: createMobileSession({ ...opts, tokens }), profile: body.profile as StaffProfile };
}

/**
 * Staff login (`POST /api/mobile/v1/auth/login`): a session when the property does not verify e-mail, else a
 * challenge to answer with `verifyStaffLogin`. Wrong credentials throw HotelOpsError (401 unauthorized).
 */
export async function loginStaff(req: StaffLoginRequest): Promise<StaffLoginResult> {
  const { hotelCode, email, password, deviceId, deviceName, ...opts } = req;
  const body = await post(
    req.baseUrl,
    "/api/mobile/v1/auth/login",
    { hotelCode, email, password, deviceId, deviceName },
    req.fetch ?? globalThis.fetch,
  );
  if (body.tokens != null) return { kind: "session", ...signIn({ ...opts, deviceId }, body) };
  if (typeof body.challengeId !== "string")
    throw new HotelOpsError({
      status: 200,
      code: "invalid_response",
      message: "The login answer is neither a session nor a challenge.",
    });
  return {
    kind: "challenge",
    challengeId: body.challengeId,
    maskedEmail: String(body.maskedEmail ?? ""),
    expiresAt: String(body.expiresAt ?? ""),
  };
}

/** Answers a login challenge with the e-mailed code (`POST /api/mobile/v1/auth/verify`). */
export async function verifyStaffLogin(
  req: StaffSessionOptions & { challengeId: string; code: string; deviceId: string; deviceName: string },
): Promise<StaffSignIn> {
  const { challengeId, code, deviceId, deviceName, ...opts } = req;
  return signIn(
    { ...opts, deviceId },
    await post(
      req.baseUrl,
      "/api/mobile/v1/auth/verify",
      { challengeId, code, deviceId, deviceName },
      req.fetch ?? globalThis.fetch,
    ),
  );
}
