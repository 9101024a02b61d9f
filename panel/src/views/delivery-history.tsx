import { useState } from "preact/hooks";
import { dateOf, type Signed, type WebhookDeliveryAttempt } from "../api.ts";
import { formatDate, lookup, useI18n, type Key } from "../i18n.ts";
import { ErrorBox, useAction, useLoad } from "./common.tsx";

/** A result kept as key and values, so it follows a language switch. */
export type Msg = { key: Key; params?: Record<string, string | number> } | undefined;

const statuses = ["PENDING", "SUCCEEDED", "FAILED", "CANCELLED"] as const;

/** An address's attempts of the last 30 days: filters, paging and Resend with the new attempt's result. */
export function History({ signed, endpointId, tick }: { signed: Signed; endpointId: string; tick: number }) {
  const { t, lang } = useI18n();
  const [deliveryStatus, setDeliveryStatus] = useState("");
  const [eventType, setEventType] = useState("");
  const [older, setOlder] = useState<WebhookDeliveryAttempt[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [reload, setReload] = useState(0);
  const [resendMessage, setResendMessage] = useState<Msg>();
  const { problem, run } = useAction();
  const catalogue = useLoad(() => signed.webhooks.listWebhookEventTypes({}), []);
  const page = useLoad(async () => {
    const r = await signed.webhooks.listWebhookDeliveries({ endpointId, deliveryStatus, eventType, limit: 50 });
    setOlder([]);
    setCursor(r.nextCursor);
    return r;
  }, [endpointId, deliveryStatus, eventType, tick, reload]);
  const rows = [...(page.data?.deliveries ?? []), ...older];

  async function more() {
    await run(async () => {
      const r = await signed.webhooks.listWebhookDeliveries({
        endpointId,
        deliveryStatus,
        eventType,
        limit: 50,
        cursor: cursor ?? "",
      });
      setOlder([...older, ...r.deliveries]);
      setCursor(r.nextCursor);
    });
  }

  /** Resends, then follows the new delivery's first attempt for a few seconds and says how it went. */
  async function resend(deliveryId: string) {
    setResendMessage(undefined);
    await run(async () => {
      const r = await signed.webhooks.resendWebhookDelivery({ endpointId, deliveryId });
      setResendMessage({ key: "resendUnderway" });
      for (let i = 0; i < 40; i++) {
        await new Promise((ok) => setTimeout(ok, 250));
        const h = await signed.webhooks.listWebhookDeliveries({ endpointId, limit: 50 });
        const a = h.deliveries.find((d) => d.deliveryId === r.deliveryId);
        if (a !== undefined) {
          setResendMessage(
            a.errorClass === undefined
              ? { key: "resendOk", params: { status: a.httpStatus ?? "", ms: a.durationMs } }
              : { key: "resendFailed", params: { error: a.errorMessage ?? a.errorClass } },
          );
          break;
        }
      }
      setReload((n) => n + 1);
    });
  }

  const seen = new Set<string>();
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">{t("historyTitle")}</h2>
      <div class="filters">
        <label class="inline">
          <span>{t("filterStatus")}</span>{" "}
          <select id="filter-status" value={deliveryStatus} onChange={(e) => setDeliveryStatus(e.currentTarget.value)}>
            <option value="">{t("all")}</option>
            {statuses.map((s) => (
              <option key={s} value={s}>
                {t(`dstatus_${s}`)}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          <span>{t("filterEvent")}</span>{" "}
          <select id="filter-event" value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
            <option value="">{t("all")}</option>
            <option value="webhook.test">webhook.test</option>
            {catalogue.data?.eventTypes.map((et) => (
              <option key={et.type} value={et.type}>
                {et.type}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => setReload((n) => n + 1)}>
          {t("refresh")}
        </button>
      </div>
      <p role="status" id="resend-result" class="result">
        {resendMessage && t(resendMessage.key, resendMessage.params)}
      </p>
      <ErrorBox problem={problem ?? page.problem} />
      {page.data && rows.length === 0 && <p>{t("historyNone")}</p>}
      {rows.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={t("historyTitle")}>
          <table id="history">
            <thead>
              <tr>
                <th scope="col">{t("colTime")}</th>
                <th scope="col">{t("colEvent")}</th>
                <th scope="col">{t("colAttempt")}</th>
                <th scope="col">{t("colHttp")}</th>
                <th scope="col">{t("colDuration")}</th>
                <th scope="col">{t("colError")}</th>
                <th scope="col">{t("colDelivery")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => {
                const first = !seen.has(a.deliveryId);
                seen.add(a.deliveryId);
                return (
                  <tr key={`${a.deliveryId}-${a.attempt}`} data-delivery={a.deliveryId}>
                    <td>{formatDate(lang, dateOf(a.startedAt))}</td>
                    <td>
                      <code>{a.eventType}</code>
                    </td>
                    <td>{a.attempt}</td>
                    <td>{a.httpStatus ?? "—"}</td>
                    <td>{t("msValue", { n: a.durationMs })}</td>
                    <td>{a.errorClass ? `${a.errorClass}${a.errorMessage ? `: ${a.errorMessage}` : ""}` : ""}</td>
                    <td>
                      {lookup(lang, `dstatus_${a.deliveryStatus}`) ?? a.deliveryStatus}
                      {first && a.eventType !== "webhook.test" && (
                        <>
                          {" "}
                          <button
                            type="button"
                            class="small-button"
                            aria-label={t("resendLabel", { event: a.eventType, id: a.deliveryId.slice(-8) })}
                            onClick={() => void resend(a.deliveryId)}
                          >
                            {t("resend")}
                          </button>
                        </>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button type="button" onClick={() => void more()}>
          {t("older")}
        </button>
      )}
    </section>
  );
}
