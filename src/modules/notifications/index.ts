import type { Deps, Module } from "../module.ts";
import { queues } from "../../jobs/queues.ts";
import { createMailer } from "../../lib/mail.ts";
import { mailNotification } from "./staff-alerts.ts";

export { insertNotification, type Notification } from "./notifications.repository.ts";
export { createNotificationsService, type NotificationsService } from "./notifications.service.ts";
export { alertStaff } from "./staff-alerts.ts";

/** The e-mail worker of staff alerts (notifications.email). */
export function createNotificationsModule(deps: Deps): Module {
  const mailer = createMailer(deps.config);
  return {
    name: "notifications",
    startWorkers: () =>
      deps.boss.registerWorker<{ notificationId: string }>(
        queues.notificationsEmail,
        (job) => mailNotification({ pool: deps.db.pool, mailer }, job.data.notificationId),
        { queue: { retryLimit: 10, retryDelay: 30, retryBackoff: true } },
      ),
  };
}
