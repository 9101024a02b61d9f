import type pg from "pg";
import type { Tx } from "../../db/transaction.ts";
import { newId } from "../../lib/ids.ts";

export interface Notification {
  id: string;
  kind: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  createdAt: Date;
  readAt: Date | null;
}

export interface NewNotification {
  propertyId: string;
  userId: string;
  kind: string;
  title: string;
  body: string;
  data?: Record<string, unknown>;
}

interface Row {
  id: string;
  kind: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  created_at: Date;
  read_at: Date | null;
}

const toNotification = (r: Row): Notification => ({
  id: r.id,
  kind: r.kind,
  title: r.title,
  body: r.body,
  data: r.data,
  createdAt: r.created_at,
  readAt: r.read_at,
});

/** Written on the caller's transaction, with the change it tells the user about. */
export async function insertNotification(tx: Tx, n: NewNotification, now: Date): Promise<string> {
  const id = newId(now.getTime());
  await tx.query(
    "insert into notifications (id, property_id, user_id, kind, title, body, data, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8)",
    [id, n.propertyId, n.userId, n.kind, n.title, n.body, JSON.stringify(n.data ?? {}), now],
  );
  return id;
}

export function createNotificationsRepository(pool: pg.Pool) {
  return {
    /** Newest first, `limit` of them after the cursor's row (keyset on created_at, id). */
    async list(
      propertyId: string,
      userId: string,
      limit: number,
      after?: { at: Date; id: string },
    ): Promise<Notification[]> {
      const { rows } = await pool.query<Row>(
        `select id, kind, title, body, data, created_at, read_at from notifications
         where property_id = $1 and user_id = $2 and ($4::timestamptz is null or (created_at, id) < ($4, $5::uuid))
         order by created_at desc, id desc limit $3`,
        [propertyId, userId, limit, after?.at ?? null, after?.id ?? null],
      );
      return rows.map(toNotification);
    },
    async markRead(propertyId: string, userId: string, id: string, now: Date): Promise<Notification | undefined> {
      const { rows } = await pool.query<Row>(
        "update notifications set read_at = coalesce(read_at, $4) where id = $3 and property_id = $1 and user_id = $2 returning id, kind, title, body, data, created_at, read_at",
        [propertyId, userId, id, now],
      );
      return rows[0] === undefined ? undefined : toNotification(rows[0]);
    },
  };
}
