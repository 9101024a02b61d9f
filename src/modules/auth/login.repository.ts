import type { Queryable } from "../../db/queryable.ts";

/** E-mailed sign-in codes (`login_challenges`, the code stored as a hash). */

export async function insertChallenge(
  q: Queryable,
  c: { id: string; userId: string; propertyId: string; codeHash: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await q.query(
    `insert into login_challenges (id, user_id, property_id, code_hash, created_at, expires_at)
    values ($1, $2, $3, $4, $5, $6)`,
    [c.id, c.userId, c.propertyId, c.codeHash, c.createdAt, c.expiresAt],
  );
}

/** The challenge, locked; `live`: unused, unexpired and with fewer than `maxAttempts` wrong codes. */
export async function lockChallenge(
  q: Queryable,
  id: string,
  now: Date,
  maxAttempts: number,
): Promise<{ user_id: string; property_id: string; code_hash: string; live: boolean } | undefined> {
  const rows = await q.query<{ user_id: string; property_id: string; code_hash: string; live: boolean }>(
    "select user_id, property_id, code_hash, (used_at is null and expires_at > $2 and failed_attempts < $3) as live from login_challenges where id = $1 for update",
    [id, now, maxAttempts],
  );
  return rows[0];
}

export async function countFailedAttempt(q: Queryable, id: string): Promise<void> {
  await q.query("update login_challenges set failed_attempts = failed_attempts + 1 where id = $1", [id]);
}

export async function useChallenge(q: Queryable, id: string, now: Date): Promise<void> {
  await q.query("update login_challenges set used_at = $2 where id = $1", [id, now]);
}
