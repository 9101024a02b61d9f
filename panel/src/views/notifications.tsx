import { useState } from "preact/hooks";
import { dateOf, problemOf, type Problem, type Signed } from "../api.ts";
import { formatDate, lookup, useI18n } from "../i18n.ts";
import { ErrorBox, PageTitle, useLoad } from "./common.tsx";

export function Notifications({ signed, onChanged }: { signed: Signed; onChanged: () => void }) {
  const { t, lang } = useI18n();
  const list = useLoad(() => signed.webhooks.listNotifications({ limit: 200 }), []);
  const [readIds, setReadIds] = useState<Set<string>>(new Set());
  const [problem, setProblem] = useState<Problem | undefined>();

  async function markRead(id: string) {
    setProblem(undefined);
    try {
      await signed.webhooks.markNotificationRead({ notificationId: id });
      setReadIds(new Set([...readIds, id]));
      onChanged();
    } catch (err) {
      setProblem(problemOf(err));
    }
  }

  return (
    <section>
      <PageTitle>{t("notificationsTitle")}</PageTitle>
      <ErrorBox problem={list.problem ?? problem} />
      {list.loading && <p>{t("loading")}</p>}
      {list.data && list.data.notifications.length === 0 && <p>{t("notificationsNone")}</p>}
      <ul class="notes">
        {list.data?.notifications.map((n) => {
          const read = n.readAt !== undefined || readIds.has(n.id);
          const endpointId = n.data["endpointId"];
          return (
            <li key={n.id} class={read ? "read" : "unread"}>
              <h2>
                {lookup(lang, `kind_${n.kind.replace(".", "_")}`) ?? n.title}{" "}
                <span class="small">({read ? t("read") : t("unread")})</span>
              </h2>
              <p class="small">{formatDate(lang, dateOf(n.createdAt))}</p>
              <p>{n.body}</p>
              <p>
                {endpointId && <a href={`/panel/webhooks/${endpointId}`}>{t("openAddress")}</a>}{" "}
                {!read && (
                  <button type="button" onClick={() => void markRead(n.id)}>
                    {t("markRead")}
                  </button>
                )}
              </p>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
