import type pg from "pg";
import { AppError } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid } from "../../lib/ids.ts";
import { createNotificationsRepository, type Notification } from "./notifications.repository.ts";

/** Panel notifications of one user in one property (today: webhook addresses closed automatically). */
export interface NotificationsService {
  list(scope: { propertyId: string; userId: string }, limit?: number): Promise<Notification[]>;
  markRead(scope: { propertyId: string; userId: string }, id: string): Promise<Notification>;
}

export function createNotificationsService(deps: { pool: pg.Pool; clock: Clock }): NotificationsService {
  const repo = createNotificationsRepository(deps.pool);
  return {
    list(scope, limit = 50) {
      return repo.list(scope.propertyId, scope.userId, Math.min(Math.max(limit, 1), 200));
    },
    async markRead(scope, id) {
      // Someone else's notification (or one of another property) is simply not found.
      const found = isUuid(id) ? await repo.markRead(scope.propertyId, scope.userId, id, deps.clock.now()) : undefined;
      if (found === undefined) throw new AppError("not_found", "Notification not found.");
      return found;
    },
  };
}
