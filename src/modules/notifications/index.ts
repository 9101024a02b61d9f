export { insertNotification, type Notification, type NewNotification } from "./notifications.repository.ts";
export { createNotificationsService, type NotificationsService } from "./notifications.service.ts";
