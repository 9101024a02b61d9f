import { randomInt } from "node:crypto";
import type { Queryable } from "../../db/queryable.ts";
import { AppError } from "../../errors.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { Mailer } from "../../lib/mail.ts";
import {
  findPropertiesOfGroup,
  findPropertyByCode,
  findUserByEmail,
  listActiveMemberships,
} from "../properties/index.ts";
import { burnVerify, hashSecret, verifySecret } from "./passwords.ts";
import { countFailedAttempt, insertChallenge, lockChallenge, useChallenge } from "./login.repository.ts";
import type { SessionService, StaffTokens } from "./sessions.service.ts";
import type { Keyed } from "../../db/held-transaction.ts";

const CHALLENGE_TTL_MS = 10 * 60 * 1000;
const MAX_CODE_ATTEMPTS = 5;

export interface Profile {
  userId: string;
  activePropertyId: string;
  properties: { id: string; code: string; name: string; permissions: string[] }[];
}

export type LoginResult =
  | { kind: "challenge"; challengeId: string; maskedEmail: string; expiresAt: Date }
  | { kind: "session"; tokens: StaffTokens; profile: Profile };

export interface LoginInput {
  hotelCode: string;
  email: string;
  password: string;
  deviceId: string;
  deviceName: string;
}

/** The same answer for a wrong hotel, e-mail or password: nothing tells which one was wrong. */
const badLogin = (): AppError =>
  new AppError("unauthorized", "Hotel code, e-mail or password is wrong, or the account is not active.");
const badChallenge = (): AppError =>
  new AppError("unauthorized", "The verification code is wrong or expired; sign in again if it keeps failing.");

/** "manager@demo.test" -> "m*****r@demo.test". */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  const shown =
    local.length <= 2 ? `${local[0] ?? ""}*` : `${local[0]}${"*".repeat(Math.max(1, local.length - 2))}${local.at(-1)}`;
  return `${shown}${email.slice(at)}`;
}

export function createLoginService(deps: {
  db: Queryable;
  transact: Transact;
  clock: Clock;
  sessions: SessionService;
  mailer: Mailer;
}) {
  const { db, clock, sessions } = deps;

  async function profileOf(userId: string, activePropertyId: string): Promise<Profile> {
    const memberships = await listActiveMemberships(db, userId);
    return {
      userId,
      activePropertyId,
      properties: memberships.map((m) => ({
        id: m.propertyId,
        code: m.propertyCode,
        name: m.propertyName,
        permissions: [...m.permissions].sort(),
      })),
    };
  }

  async function open(
    userId: string,
    propertyId: string,
    device: { deviceId: string; deviceName: string },
    emailVerified = false,
  ): Promise<LoginResult & { kind: "session" }> {
    const tokens = await sessions.openStaffSession({
      userId,
      propertyId,
      deviceId: device.deviceId.slice(0, 100),
      deviceName: device.deviceName.slice(0, 100),
      emailVerified,
    });
    return { kind: "session", tokens, profile: await profileOf(userId, propertyId) };
  }

  return {
    /**
     * Checks hotel, e-mail and password (argon2 runs even for an unknown user, so timing does not tell), picks the
     * active property (the named property, or the first one of the named group the user belongs to), then either
     * opens a session or, when that property asks for it, e-mails a code and answers with a challenge.
     */
    async login(input: LoginInput): Promise<LoginResult> {
      const user = input.email.length <= 320 ? await findUserByEmail(db, input.email.trim()) : undefined;
      const passwordOk =
        user === undefined ? await burnVerify(input.password) : await verifySecret(user.passwordHash, input.password);
      if (user === undefined || !passwordOk || !user.active) throw badLogin();
      const code = input.hotelCode.trim().toUpperCase();
      const memberships = await listActiveMemberships(db, user.id);
      const property = await findPropertyByCode(db, code);
      const candidates = property !== undefined ? [property] : await findPropertiesOfGroup(db, code);
      const active = candidates.find((p) => p.active && memberships.some((m) => m.propertyId === p.id));
      if (active === undefined) throw badLogin();
      if (!active.emailVerification) return open(user.id, active.id, input);

      const challengeId = newId();
      const otp = String(randomInt(0, 1_000_000)).padStart(6, "0");
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS);
      await insertChallenge(db, {
        id: challengeId,
        userId: user.id,
        propertyId: active.id,
        codeHash: await hashSecret(otp),
        createdAt: now,
        expiresAt,
      });
      await deps.mailer.send({
        to: user.email,
        subject: `${otp} is your sign-in code for ${active.name}`,
        text: `Your sign-in code is ${otp}. It expires in 10 minutes. If you did not try to sign in, change your password.`,
      });
      return { kind: "challenge", challengeId, maskedEmail: maskEmail(user.email), expiresAt };
    },

    /** A code is single use; after MAX_CODE_ATTEMPTS wrong codes the challenge is dead. */
    async verify(input: {
      challengeId: string;
      code: string;
      deviceId: string;
      deviceName: string;
    }): Promise<LoginResult & { kind: "session" }> {
      if (!/^[0-9a-f-]{36}$/i.test(input.challengeId)) throw badChallenge();
      const now = clock.now();
      const claimed = await deps.transact(async (tx) => {
        const row = await lockChallenge(tx, input.challengeId, now, MAX_CODE_ATTEMPTS);
        if (row === undefined || !row.live) return undefined;
        if (!/^\d{6}$/.test(input.code) || !(await verifySecret(row.code_hash, input.code))) {
          // committed even though the call fails: the attempt counts
          await countFailedAttempt(tx, input.challengeId);
          return undefined;
        }
        await useChallenge(tx, input.challengeId, now);
        return row;
      });
      if (claimed === undefined) throw badChallenge();
      return open(claimed.user_id, claimed.property_id, input, true);
    },

    async refresh(refreshToken: string, deviceId?: string): Promise<StaffTokens> {
      return sessions.refreshStaffSession(refreshToken, deviceId);
    },

    /** The session result for another property of the user (`POST /api/mobile/v1/session/active-property`). */
    async switchProperty(
      session: { sessionId: string; userId: string; activePropertyId: string },
      propertyId: string,
    ): Promise<{ tokens: StaffTokens; profile: Profile }> {
      const tokens = await sessions.switchStaffProperty(session.sessionId, session.activePropertyId, propertyId);
      return { tokens, profile: await profileOf(session.userId, propertyId) };
    },

    async logout(sessionId: string, keyed?: Keyed): Promise<void> {
      await sessions.revokeSession(sessionId, "logout", keyed);
    },
  };
}

export type LoginService = ReturnType<typeof createLoginService>;
