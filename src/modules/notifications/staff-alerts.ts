import type pg from "pg";
import type { Tx } from "../../db/transaction.ts";
import { poolQueryable } from "../../db/queryable.ts";
import { queues } from "../../jobs/queues.ts";
import type { Mailer } from "../../lib/mail.ts";
import { findPropertyById, findUserById, membersWithPermission } from "../properties/index.ts";
import { insertNotification } from "./notifications.repository.ts";

export interface StaffAlert {
  propertyId: string;
  /** Every active member whose role holds this permission is told. */
  permission: string;
  kind: string;
  title: string;
  /** Plain text for the panel and the e-mail: no guest personal data. */
  body: string;
  data?: Record<string, unknown>;
}

/**
 * Tells the property's staff who hold `permission`: a panel notification each, written on the caller's
 * transaction, and an e-mail each, sent by a job enqueued in that same transaction (rolled back with it).
 * Returns the notification ids.
 */
export async function alertStaff(tx: Tx, alert: StaffAlert, now: Date): Promise<string[]> {
  const userIds = await membersWithPermission(tx, alert.propertyId, alert.permission);
  const ids: string[] = [];
  for (const userId of userIds) {
    const { permission: _permission, ...n } = alert;
    ids.push(await insertNotification(tx, { ...n, userId }, now));
  }
  if (ids.length > 0)
    await tx.enqueueMany(
      queues.notificationsEmail,
      ids.map((notificationId) => ({ notificationId })),
    );
  return ids;
}

/** What a notifications.email job runs: the notification as an e-mail to its user (gone user or row: nothing). */
export async function mailNotification(deps: { pool: pg.Pool; mailer: Mailer }, notificationId: string): Promise<void> {
  const { rows } = await deps.pool.query<{ userId: string; propertyId: string; title: string; body: string }>(
    `select user_id as "userId", property_id as "propertyId", title, body from notifications where id = $1`,
    [notificationId],
  );
  const n = rows[0];
  if (n === undefined) return;
  const q = poolQueryable(deps.pool);
  const [user, property] = await Promise.all([findUserById(q, n.userId), findPropertyById(q, n.propertyId)]);
  if (user === undefined || property === undefined) return;
  await deps.mailer.send({
    to: user.email,
    subject: `${n.title} (${property.code})`,
    text: `${n.body}\n\nProperty ${property.code}. This message is also in the panel under Notifications.`,
  });
}
