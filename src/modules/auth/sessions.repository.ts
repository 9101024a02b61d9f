import type { Queryable } from "../../db/queryable.ts";
import { staffPermissionsSql } from "../properties/index.ts";

/** Staff sessions (`staff_sessions`) and their rotating refresh tokens (`refresh_tokens`, stored as hashes). */

export async function insertSession(
  q: Queryable,
  s: {
    id: string;
    userId: string;
    propertyId: string;
    deviceId: string;
    deviceName: string;
    createdAt: Date;
    expiresAt: Date;
    emailVerified: boolean;
  },
): Promise<void> {
  await q.query(
    `insert into staff_sessions (id, user_id, property_id, device_id, device_name, created_at, expires_at, email_verified)
    values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [s.id, s.userId, s.propertyId, s.deviceId, s.deviceName, s.createdAt, s.expiresAt, s.emailVerified],
  );
}

export async function insertRefreshToken(
  q: Queryable,
  t: { id: string; sessionId: string; tokenHash: string; parentId?: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  if (t.parentId === undefined)
    await q.query(
      `insert into refresh_tokens (id, session_id, token_hash, created_at, expires_at) values ($1, $2, $3, $4, $5)`,
      [t.id, t.sessionId, t.tokenHash, t.createdAt, t.expiresAt],
    );
  else
    await q.query(
      `insert into refresh_tokens (id, session_id, token_hash, parent_id, created_at, expires_at) values ($1, $2, $3, $4, $5, $6)`,
      [t.id, t.sessionId, t.tokenHash, t.parentId, t.createdAt, t.expiresAt],
    );
}

/** A presented refresh token with its session; perms is null when the membership, user or property is no longer active. */
export interface PresentedToken {
  id: string;
  sessionId: string;
  usedAt: Date | null;
  graceAnswer: Buffer | null;
  live: boolean;
  userId: string;
  propertyId: string;
  deviceId: string;
  sessionExpiresAt: Date;
  perms: string[] | null;
}

/** The token by its hash, its row and its session's locked (two refreshes of one token serialise on them). */
export async function lockPresentedToken(
  q: Queryable,
  tokenHash: string,
  now: Date,
): Promise<PresentedToken | undefined> {
  const rows = await q.query<PresentedToken>(
    `
    select t.id, t.session_id as "sessionId", t.used_at as "usedAt", t.grace_answer as "graceAnswer",
      s.user_id as "userId", s.property_id as "propertyId", s.device_id as "deviceId",
      (s.revoked_at is null and s.expires_at > $1 and t.expires_at > $2) as live, s.expires_at as "sessionExpiresAt",
      ${staffPermissionsSql("s.user_id", "s.property_id")} as perms
    from refresh_tokens t join staff_sessions s on s.id = t.session_id where t.token_hash = $3 for update of t, s`,
    [now, now, tokenHash],
  );
  return rows[0];
}

/** Whether the token rotated from `parentId` is still unused (undefined: none); through the session's index. */
export async function successorUnused(q: Queryable, sessionId: string, parentId: string): Promise<boolean | undefined> {
  const rows = await q.query<{ unused: boolean }>(
    `select used_at is null as unused from refresh_tokens where session_id = $1 and parent_id = $2`,
    [sessionId, parentId],
  );
  return rows[0]?.unused;
}

export async function revokeSessionRow(q: Queryable, sessionId: string, now: Date, reason: string): Promise<void> {
  await q.query(`update staff_sessions set revoked_at = $1, revoked_reason = $2 where id = $3 and revoked_at is null`, [
    now,
    reason,
    sessionId,
  ]);
}

/** Spends a token; `graceAnswer`: the sealed answer a retry in grace gets again. */
export async function spendToken(q: Queryable, id: string, now: Date, graceAnswer: Buffer | null): Promise<void> {
  await q.query(`update refresh_tokens set used_at = $1, grace_answer = $2 where id = $3`, [now, graceAnswer, id]);
}

export async function touchSession(q: Queryable, sessionId: string, now: Date): Promise<void> {
  await q.query(`update staff_sessions set last_used_at = $1 where id = $2`, [now, sessionId]);
}

/** Locks the session's unused tokens: token rows first, then the session, the order a refresh locks them in. */
export async function lockUnusedTokens(q: Queryable, sessionId: string): Promise<void> {
  await q.query(`select id from refresh_tokens where session_id = $1 and used_at is null for update`, [sessionId]);
}

/** A live (not revoked, not expired) session, locked. */
export async function lockLiveSession(
  q: Queryable,
  sessionId: string,
  now: Date,
): Promise<{ userId: string; expiresAt: Date; propertyId: string; emailVerified: boolean } | undefined> {
  const rows = await q.query<{ userId: string; expiresAt: Date; propertyId: string; emailVerified: boolean }>(
    `
    select s.user_id as "userId", s.expires_at as "expiresAt", s.property_id as "propertyId", s.email_verified as "emailVerified"
    from staff_sessions s
    where s.id = $1 and s.revoked_at is null and s.expires_at > $2 for update of s`,
    [sessionId, now],
  );
  return rows[0];
}

export async function moveSession(q: Queryable, sessionId: string, propertyId: string, now: Date): Promise<void> {
  await q.query(`update staff_sessions set property_id = $1, last_used_at = $2 where id = $3`, [
    propertyId,
    now,
    sessionId,
  ]);
}

export async function spendTokensOfSession(q: Queryable, sessionId: string, now: Date): Promise<void> {
  await q.query(`update refresh_tokens set used_at = $1 where session_id = $2 and used_at is null`, [now, sessionId]);
}
