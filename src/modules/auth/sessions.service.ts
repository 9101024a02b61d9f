import { createHash } from "node:crypto";
import { AppError } from "../../errors.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId, newToken } from "../../lib/ids.ts";
import { findActiveMembership, findPropertyById, findUserById } from "../properties/index.ts";
import {
  insertRefreshToken,
  insertSession,
  lockLiveSession,
  lockPresentedToken,
  lockUnusedTokens,
  moveSession,
  revokeSessionRow,
  spendToken,
  spendTokensOfSession,
  successorUnused,
  touchSession,
} from "./sessions.repository.ts";
import { openGraceAnswer, sealGraceAnswer } from "./refresh-grace.ts";
import type { TokenIssuer } from "./tokens.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** A staff session lasts 30 days at most; refreshing never extends it (spec: 30 days absolute). */
const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

export interface StaffTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds the access token lives: 900, or what the session has left when that is less. */
  expiresIn: number;
  sessionId: string;
  sessionExpiresAt: Date;
}

interface OpenSessionInput {
  userId: string;
  propertyId: string;
  deviceId?: string;
  deviceName?: string;
  /** Opened with an e-mail code: the session may switch into properties that require e-mail verification. */
  emailVerified?: boolean;
}

export interface SessionService {
  /** Opens a session for an active membership of an active user (else `unauthorized`); returns its first tokens. */
  openStaffSession(input: OpenSessionInput): Promise<StaffTokens>;
  /**
   * Rotates a refresh token: the presented token is spent and a new one issued with a new access token.
   * A token presented a second time is reuse (a stolen copy or a racing client): the whole session is revoked.
   * Except within the grace window: the token rotated less than `refreshGraceMs` ago, presented again with the
   * session's device id while its successor is still unused, gets the same answer again (a retry after a lost
   * answer).
   */
  refreshStaffSession(refreshToken: string, deviceId?: string): Promise<StaffTokens>;
  /**
   * Moves a live session to another property where the user holds an active membership (else `not_found`) and
   * issues new tokens: the refresh token rotates as on a refresh, the session's 30-day end stays. `conflict`
   * when the session left `fromPropertyId` meanwhile (two switches at once: only the first one wins).
   */
  switchStaffProperty(sessionId: string, fromPropertyId: string, propertyId: string): Promise<StaffTokens>;
  /** Revokes a session at once: its access tokens fail on their next request. Idempotent. */
  revokeSession(sessionId: string, reason?: string, keyed?: Keyed): Promise<void>;
}

function hashRefreshToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

const invalidRefresh = (): AppError =>
  new AppError("unauthorized", "The refresh token is invalid, expired or revoked; sign in again.");

/** Seconds from `now` to the session's end: an access token never outlives its session. */
const secondsLeft = (sessionExpiresAt: Date, now: Date): number =>
  Math.floor((sessionExpiresAt.getTime() - now.getTime()) / 1000);

export function createSessionService(deps: {
  transact: Transact;
  clock: Clock;
  tokens: TokenIssuer;
  /** How long a just-rotated refresh token may be presented again for the same answer; 0: never. */
  refreshGraceMs?: number;
}): SessionService {
  const { transact, clock, tokens } = deps;
  const graceMs = deps.refreshGraceMs ?? 30_000;

  return {
    async openStaffSession(input) {
      const now = clock.now();
      const sessionId = newId(now.getTime());
      const refreshToken = newToken("rt_");
      const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
      let perms: string[] = [];
      await transact(async (tx) => {
        const user = await findUserById(tx, input.userId);
        const membership =
          user?.active === true ? await findActiveMembership(tx, input.userId, input.propertyId) : undefined;
        if (membership === undefined)
          throw new AppError("unauthorized", "The user has no active membership in this property.");
        perms = membership.permissions;
        await insertSession(tx, {
          id: sessionId,
          userId: input.userId,
          propertyId: input.propertyId,
          deviceId: input.deviceId ?? "",
          deviceName: input.deviceName ?? "",
          createdAt: now,
          expiresAt,
          emailVerified: input.emailVerified === true,
        });
        await insertRefreshToken(tx, {
          id: newId(),
          sessionId,
          tokenHash: hashRefreshToken(refreshToken),
          createdAt: now,
          expiresAt,
        });
      });
      const access = await tokens.sign(
        { kind: "staff", sub: input.userId, sid: sessionId, pid: input.propertyId, perms },
        secondsLeft(expiresAt, now),
      );
      return {
        accessToken: access.token,
        refreshToken,
        expiresIn: access.expiresIn,
        sessionId,
        sessionExpiresAt: expiresAt,
      };
    },

    async refreshStaffSession(presented, deviceId = "") {
      const now = clock.now();
      const next = newToken("rt_");
      const outcome = await transact(async (tx) => {
        // The row lock serialises two refreshes of one token: the second sees used_at (reuse, or a retry in grace).
        // perms is null when the membership, the user or the property is no longer active: no new tokens then.
        const row = await lockPresentedToken(tx, hashRefreshToken(presented), now);
        if (row === undefined || !row.live || row.perms === null) return undefined;
        if (row.usedAt !== null) {
          const inGrace =
            now.getTime() - row.usedAt.getTime() <= graceMs &&
            row.deviceId !== "" &&
            deviceId.slice(0, 100) === row.deviceId &&
            row.graceAnswer !== null;
          // the successor must still be unused (through the session's index: reuse is the rare path)
          const retried =
            inGrace && (await successorUnused(tx, row.sessionId, row.id)) === true
              ? openGraceAnswer(presented, row.graceAnswer!)
              : undefined;
          if (retried !== undefined && retried.accessExpiresAtMs > now.getTime()) {
            const expiresIn = Math.floor((retried.accessExpiresAtMs - now.getTime()) / 1000);
            return {
              accessToken: retried.accessToken,
              refreshToken: retried.refreshToken,
              expiresIn: Math.min(expiresIn, secondsLeft(row.sessionExpiresAt, now)),
              sessionId: row.sessionId,
              sessionExpiresAt: row.sessionExpiresAt,
            };
          }
          await revokeSessionRow(tx, row.sessionId, now, "refresh_token_reuse");
          return undefined;
        }
        // Signed inside the transaction: the answer is sealed into the spent token's row for a retry in grace.
        const access = await tokens.sign(
          { kind: "staff", sub: row.userId, sid: row.sessionId, pid: row.propertyId, perms: row.perms },
          secondsLeft(row.sessionExpiresAt, now),
        );
        const sealed =
          graceMs > 0
            ? sealGraceAnswer(presented, {
                accessToken: access.token,
                refreshToken: next,
                accessExpiresAtMs: (Math.floor(now.getTime() / 1000) + access.expiresIn) * 1000,
              })
            : null;
        await spendToken(tx, row.id, now, sealed);
        await insertRefreshToken(tx, {
          id: newId(),
          sessionId: row.sessionId,
          tokenHash: hashRefreshToken(next),
          parentId: row.id,
          createdAt: now,
          expiresAt: row.sessionExpiresAt,
        });
        await touchSession(tx, row.sessionId, now);
        return {
          accessToken: access.token,
          refreshToken: next,
          expiresIn: access.expiresIn,
          sessionId: row.sessionId,
          sessionExpiresAt: row.sessionExpiresAt,
        };
      });
      // Thrown after commit, so a detected reuse stays revoked.
      if (outcome === undefined) throw invalidRefresh();
      return outcome;
    },

    async switchStaffProperty(sessionId, fromPropertyId, propertyId) {
      if (!isUuid(propertyId)) throw new AppError("not_found", "Property not found.");
      const now = clock.now();
      const next = newToken("rt_");
      const session = await transact(async (tx) => {
        // Token rows first, then the session: the order a refresh locks them in (no deadlock between the two).
        await lockUnusedTokens(tx, sessionId);
        const row = await lockLiveSession(tx, sessionId, now);
        if (row === undefined || (await findUserById(tx, row.userId))?.active !== true)
          throw new AppError("unauthorized", "The session has ended; sign in again.");
        if (row.propertyId !== fromPropertyId)
          throw new AppError("conflict", "The session switched property meanwhile; use the tokens of that switch.");
        const membership = await findActiveMembership(tx, row.userId, propertyId);
        if (membership === undefined) throw new AppError("not_found", "Property not found.");
        // A session is only as trusted as its login: one opened without an e-mail code cannot enter a property that asks for one.
        const target = await findPropertyById(tx, propertyId);
        if (target?.emailVerification === true && !row.emailVerified) {
          throw new AppError(
            "email_verification_required",
            `${membership.propertyCode} requires e-mail verification: sign in with its hotel code to receive a code.`,
          );
        }
        await moveSession(tx, sessionId, propertyId, now);
        // the tokens held so far are spent, as on a refresh: presenting one again is reuse
        await spendTokensOfSession(tx, sessionId, now);
        await insertRefreshToken(tx, {
          id: newId(),
          sessionId,
          tokenHash: hashRefreshToken(next),
          createdAt: now,
          expiresAt: row.expiresAt,
        });
        return { userId: row.userId, expiresAt: row.expiresAt, perms: membership.permissions };
      });
      const access = await tokens.sign(
        { kind: "staff", sub: session.userId, sid: sessionId, pid: propertyId, perms: session.perms },
        secondsLeft(session.expiresAt, now),
      );
      return {
        accessToken: access.token,
        refreshToken: next,
        expiresIn: access.expiresIn,
        sessionId,
        sessionExpiresAt: session.expiresAt,
      };
    },

    async revokeSession(sessionId, reason = "logout", keyed) {
      if (!isUuid(sessionId)) return;
      await transact((tx) => revokeSessionRow(tx, sessionId, clock.now(), reason), keyed);
    },
  };
}
