import { createHash } from "node:crypto";
import { AppError } from "../../errors.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId, newToken } from "../../lib/ids.ts";
import { findActiveMembership, findPropertyById, findUserById, staffPermissionsSql } from "../properties/index.ts";
import type { TokenIssuer } from "./tokens.ts";

/** A staff session lasts 30 days at most; refreshing never extends it (spec: 30 days absolute). */
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

export interface StaffTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds: 900. */
  expiresIn: number;
  sessionId: string;
  sessionExpiresAt: Date;
}

export interface OpenSessionInput {
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
   */
  refreshStaffSession(refreshToken: string): Promise<StaffTokens>;
  /**
   * Moves a live session to another property where the user holds an active membership (else `not_found`) and
   * issues new tokens: the refresh token rotates as on a refresh, the session's 30-day end stays. `conflict`
   * when the session left `fromPropertyId` meanwhile (two switches at once: only the first one wins).
   */
  switchStaffProperty(sessionId: string, fromPropertyId: string, propertyId: string): Promise<StaffTokens>;
  /** Revokes a session at once: its access tokens fail on their next request. Idempotent. */
  revokeSession(sessionId: string, reason?: string): Promise<void>;
}

export function hashRefreshToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

const invalidRefresh = (): AppError =>
  new AppError("unauthorized", "The refresh token is invalid, expired or revoked; sign in again.");

export function createSessionService(deps: { transact: Transact; clock: Clock; tokens: TokenIssuer }): SessionService {
  const { transact, clock, tokens } = deps;

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
        await tx.query(
          `insert into staff_sessions (id, user_id, property_id, device_id, device_name, created_at, expires_at, email_verified)
          values ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            sessionId,
            input.userId,
            input.propertyId,
            input.deviceId ?? "",
            input.deviceName ?? "",
            now,
            expiresAt,
            input.emailVerified === true,
          ],
        );
        await tx.query(
          `insert into refresh_tokens (id, session_id, token_hash, created_at, expires_at) values ($1, $2, $3, $4, $5)`,
          [newId(), sessionId, hashRefreshToken(refreshToken), now, expiresAt],
        );
      });
      const access = await tokens.sign({
        kind: "staff",
        sub: input.userId,
        sid: sessionId,
        pid: input.propertyId,
        perms,
      });
      return {
        accessToken: access.token,
        refreshToken,
        expiresIn: access.expiresIn,
        sessionId,
        sessionExpiresAt: expiresAt,
      };
    },

    async refreshStaffSession(presented) {
      const now = clock.now();
      const next = newToken("rt_");
      const outcome = await transact(async (tx) => {
        // The row lock serialises two refreshes of one token: the second sees used_at and counts as reuse.
        // perms is null when the membership, the user or the property is no longer active: no new tokens then.
        const rows = await tx.query<{
          id: string;
          sessionId: string;
          used: boolean;
          live: boolean;
          userId: string;
          propertyId: string;
          sessionExpiresAt: Date;
          perms: string[] | null;
        }>(
          `
          select t.id, t.session_id as "sessionId", t.used_at is not null as used, s.user_id as "userId", s.property_id as "propertyId",
            (s.revoked_at is null and s.expires_at > $1 and t.expires_at > $2) as live, s.expires_at as "sessionExpiresAt",
            ${staffPermissionsSql("s.user_id", "s.property_id")} as perms
          from refresh_tokens t join staff_sessions s on s.id = t.session_id where t.token_hash = $3 for update of t, s`,
          [now, now, hashRefreshToken(presented)],
        );
        const row = rows[0];
        if (row === undefined || !row.live || row.perms === null) return { ok: false as const };
        if (row.used) {
          await tx.query(
            `update staff_sessions set revoked_at = $1, revoked_reason = 'refresh_token_reuse' where id = $2 and revoked_at is null`,
            [now, row.sessionId],
          );
          return { ok: false as const };
        }
        await tx.query(`update refresh_tokens set used_at = $1 where id = $2`, [now, row.id]);
        await tx.query(
          `insert into refresh_tokens (id, session_id, token_hash, parent_id, created_at, expires_at) values ($1, $2, $3, $4, $5, $6)`,
          [newId(), row.sessionId, hashRefreshToken(next), row.id, now, row.sessionExpiresAt],
        );
        await tx.query(`update staff_sessions set last_used_at = $1 where id = $2`, [now, row.sessionId]);
        return { ok: true as const, row };
      });
      // Thrown after commit, so a detected reuse stays revoked.
      if (!outcome.ok) throw invalidRefresh();
      const { row } = outcome;
      const access = await tokens.sign({
        kind: "staff",
        sub: row.userId,
        sid: row.sessionId,
        pid: row.propertyId,
        perms: row.perms ?? [],
      });
      return {
        accessToken: access.token,
        refreshToken: next,
        expiresIn: access.expiresIn,
        sessionId: row.sessionId,
        sessionExpiresAt: row.sessionExpiresAt,
      };
    },

    async switchStaffProperty(sessionId, fromPropertyId, propertyId) {
      if (!isUuid(propertyId)) throw new AppError("not_found", "Property not found.");
      const now = clock.now();
      const next = newToken("rt_");
      const session = await transact(async (tx) => {
        // Token rows first, then the session: the order a refresh locks them in (no deadlock between the two).
        await tx.query(`select id from refresh_tokens where session_id = $1 and used_at is null for update`, [
          sessionId,
        ]);
        const rows = await tx.query<{
          userId: string;
          expiresAt: Date;
          propertyId: string;
          emailVerified: boolean;
        }>(
          `
          select s.user_id as "userId", s.expires_at as "expiresAt", s.property_id as "propertyId", s.email_verified as "emailVerified"
          from staff_sessions s
          where s.id = $1 and s.revoked_at is null and s.expires_at > $2 for update of s`,
          [sessionId, now],
        );
        const row = rows[0];
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
        await tx.query(`update staff_sessions set property_id = $1, last_used_at = $2 where id = $3`, [
          propertyId,
          now,
          sessionId,
        ]);
        // the tokens held so far are spent, as on a refresh: presenting one again is reuse
        await tx.query(`update refresh_tokens set used_at = $1 where session_id = $2 and used_at is null`, [
          now,
          sessionId,
        ]);
        await tx.query(
          `insert into refresh_tokens (id, session_id, token_hash, created_at, expires_at) values ($1, $2, $3, $4, $5)`,
          [newId(), sessionId, hashRefreshToken(next), now, row.expiresAt],
        );
        return { userId: row.userId, expiresAt: row.expiresAt, perms: membership.permissions };
      });
      const access = await tokens.sign({
        kind: "staff",
        sub: session.userId,
        sid: sessionId,
        pid: propertyId,
        perms: session.perms,
      });
      return {
        accessToken: access.token,
        refreshToken: next,
        expiresIn: access.expiresIn,
        sessionId,
        sessionExpiresAt: session.expiresAt,
      };
    },

    async revokeSession(sessionId, reason = "logout") {
      if (!isUuid(sessionId)) return;
      await transact(async (tx) => {
        await tx.query(
          `update staff_sessions set revoked_at = $1, revoked_reason = $2 where id = $3 and revoked_at is null`,
          [clock.now(), reason, sessionId],
        );
      });
    },
  };
}
