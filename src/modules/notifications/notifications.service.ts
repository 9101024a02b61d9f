import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import { decodePageCursor, pageResult } from "../../lib/page.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid } from "../../lib/ids.ts";
import { createNotificationsRepository, type Notification } from "./notifications.repository.ts";

/** Panel notifications of one user in one property (today: webhook addresses closed automatically). */
export interface NotificationsService {
  /** One page, newest first: `limit` 1-200 (clamped; default 50) after `cursor`; `nextCursor` empty on the last. */
  list(
    scope: { propertyId: string; userId: string },
    page?: { limit?: number; cursor?: string },
  ): Promise<{ notifications: Notification[]; nextCursor: string }>;
  markRead(scope: { propertyId: string; userId: string }, id: string): Promise<Notification>;
}

export function createNotificationsService(deps: { pool: pg.Pool; clock: Clock }): NotificationsService {
  const repo = createNotificationsRepository(deps.pool);
  return {
    async list(scope, page = {}) {
      const limit = Math.min(Math.max(page.limit ?? 50, 1), 200);
      const after = page.cursor ? decodePageCursor(page.cursor) : undefined;
      if (after !== undefined && !isUuid(after.id)) throw invalidField("cursor", "not a cursor of this list");
      const rows = await repo.list(scope.propertyId, scope.userId, limit + 1, after);
      const { items, nextCursor } = pageResult(rows, limit);
      return { notifications: items, nextCursor };
    },
    async markRead(scope, id) {
      // Someone else's notification (or one of another property) is simply not found.
      const found = isUuid(id) ? await repo.markRead(scope.propertyId, scope.userId, id, deps.clock.now()) : undefined;
      if (found === undefined) throw new AppError("not_found", "Notification not found.");
      return found;
    },
  };
}
