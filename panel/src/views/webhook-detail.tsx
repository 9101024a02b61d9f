import { useState } from "preact/hooks";
import { dateOf, problemOf, WebhookEndpointStatus, type Problem, type Signed, type WebhookDeliveryAttempt, type WebhookEndpoint } from "../api.ts";
import { formatDate, lookup, useI18n, type Key } from "../i18n.ts";
import { navigate } from "../router.ts";
import { Confirm, ErrorBox, PageTitle, SecretBox, useLoad } from "./common.tsx";
import { statusKey } from "./webhooks.tsx";

type Pending = "rotate" | "disable" | "delete" | undefined;
/** A result kept as key and values, so it follows a language switch. */
type Msg = { key: Key; params?: Record<string, string | number> } | undefined;

export function WebhookDetail({ signed, id }: { signed: Signed; id: string }) {
  const { t, lang } = useI18n();
  const loaded = useLoad(() => signed.webhooks.getWebhookEndpoint({ endpointId: id }), [id]);
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | undefined>();
  const [secret, setSecret] = useState<string | undefined>();
  const [pending, setPending] = useState<Pending>();
  const [message, setMessage] = useState<Msg>();
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const [historyTick, setHistoryTick] = useState(0);
  const ep = endpoint ?? loaded.data?.endpoint;

  if (loaded.problem?.notFound) {
    return (
      <section>
        <PageTitle>{t("notFound")}</PageTitle>
        <ErrorBox problem={loaded.problem} />
        <p>
          <a href="/panel/webhooks">{t("backToList")}</a>
        </p>
      </section>
    );
  }
  if (ep === undefined) {
    return (
      <section>
        <PageTitle>{t("detailTitle")}</PageTitle>
        <ErrorBox problem={loaded.problem} />
        {loaded.loading && <p>{t("loading")}</p>}
      </section>
    );
  }

  async function act(run: () => Promise<Msg | void>) {
    setBusy(true);
    setProblem(undefined);
    setMessage(undefined);
    try {
      const msg = await run();
      if (msg) setMessage(msg);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
      setPending(undefined);
    }
  }
  const test = () =>
    act(async () => {
      const r = await signed.webhooks.testWebhookEndpoint({ endpointId: ep.id });
      setHistoryTick((n) => n + 1);
      return r.error === undefined
        ? { key: "testOk", params: { status: r.httpStatus ?? "", ms: r.durationMs } }
        : { key: "testFailed", params: { ms: r.durationMs, error: r.httpStatus ? `HTTP ${r.httpStatus}: ${r.error}` : r.error } };
    });
  const rotate = () =>
    act(async () => {
      const r = await signed.webhooks.rotateWebhookEndpointSecret({ endpointId: ep.id });
      setEndpoint(r.endpoint);
      setSecret(r.secret);
    });
  const disable = () =>
    act(async () => {
      setEndpoint((await signed.webhooks.disableWebhookEndpoint({ endpointId: ep.id })).endpoint);
      return { key: "disabledMsg" };
    });
  const enable = () =>
    act(async () => {
      setEndpoint((await signed.webhooks.enableWebhookEndpoint({ endpointId: ep.id })).endpoint);
      return { key: "enabledMsg" };
    });
  const remove = () =>
    act(async () => {
      await signed.webhooks.deleteWebhookEndpoint({ endpointId: ep.id });
      navigate("/panel/webhooks");
    });

  const overlapUntil = formatDate(lang, dateOf(ep.previousSecretExpiresAt));
  return (
    <section>
      <p>
        <a href="/panel/webhooks">← {t("backToList")}</a>
      </p>
      <PageTitle>
        {t("detailTitle")}: <span class="url">{ep.url}</span>
      </PageTitle>
      <p>
        <span class={`pill ${statusKey(ep.status)}`} id="endpoint-status">
          {t(statusKey(ep.status))}
        </span>
      </p>
      {ep.status === WebhookEndpointStatus.CLOSED && (
        <p class="warning" id="closed-banner">
          {t("detailClosed", { at: formatDate(lang, dateOf(ep.closedAt)), reason: (ep.closedReason ?? "").replace(/\.$/, "") })}
        </p>
      )}
      {ep.status === WebhookEndpointStatus.DISABLED && <p class="warning">{t("detailDisabled")}</p>}
      <dl class="facts">
        <dt>{t("colEvents")}</dt>
        <dd>{ep.eventTypes.join(", ")}</dd>
        {ep.description && (
          <>
            <dt>{t("detailDescription")}</dt>
            <dd>{ep.description}</dd>
          </>
        )}
        <dt>{t("detailCreated")}</dt>
        <dd>{formatDate(lang, dateOf(ep.createdAt))}</dd>
        <dt>{t("colLastSuccess")}</dt>
        <dd>{ep.lastSuccessAt ? formatDate(lang, dateOf(ep.lastSuccessAt)) : t("never")}</dd>
        <dt>{t("colFailures")}</dt>
        <dd>{ep.failuresSinceSuccess}</dd>
      </dl>
      {secret ? (
        <SecretBox secret={secret} note={t("secretOverlap", { at: overlapUntil })} onDone={() => setSecret(undefined)} />
      ) : (
        <div class="actions">
          <button type="button" class="primary" disabled={busy} onClick={() => void test()}>
            {t("testConnection")}
          </button>
          <button type="button" disabled={busy} onClick={() => setPending("rotate")}>
            {t("rotateSecret")}
          </button>
          {ep.status === WebhookEndpointStatus.OPEN ? (
            <button type="button" disabled={busy} onClick={() => setPending("disable")}>
              {t("disable")}
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={() => void enable()}>
              {t("enable")}
            </button>
          )}
          <button type="button" class="danger" disabled={busy} onClick={() => setPending("delete")}>
            {t("delete")}
          </button>
        </div>
      )}
      {pending === "rotate" && <Confirm text={t("confirmRotate")} onYes={() => void rotate()} onNo={() => setPending(undefined)} />}
      {pending === "disable" && <Confirm text={t("confirmDisable")} onYes={() => void disable()} onNo={() => setPending(undefined)} />}
      {pending === "delete" && <Confirm text={t("confirmDelete")} onYes={() => void remove()} onNo={() => setPending(undefined)} />}
      <p role="status" id="action-result" class="result">
        {message && t(message.key, message.params)}
      </p>
      <ErrorBox problem={problem} />
      <History signed={signed} endpointId={ep.id} tick={historyTick} />
    </section>
  );
}

const statuses = ["PENDING", "SUCCEEDED", "FAILED", "CANCELLED"] as const;

function History({ signed, endpointId, tick }: { signed: Signed; endpointId: string; tick: number }) {
  const { t, lang } = useI18n();
  const [deliveryStatus, setDeliveryStatus] = useState("");
  const [eventType, setEventType] = useState("");
  const [older, setOlder] = useState<WebhookDeliveryAttempt[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [reload, setReload] = useState(0);
  const [resendMessage, setResendMessage] = useState<Msg>();
  const [problem, setProblem] = useState<Problem | undefined>();
  const catalogue = useLoad(() => signed.webhooks.listWebhookEventTypes({}), []);
  const page = useLoad(async () => {
    const r = await signed.webhooks.listWebhookDeliveries({ endpointId, deliveryStatus, eventType, limit: 50 });
    setOlder([]);
    setCursor(r.nextCursor);
    return r;
  }, [endpointId, deliveryStatus, eventType, tick, reload]);
  const rows = [...(page.data?.deliveries ?? []), ...older];

  async function more() {
    try {
      const r = await signed.webhooks.listWebhookDeliveries({ endpointId, deliveryStatus, eventType, limit: 50, cursor: cursor ?? "" });
      setOlder([...older, ...r.deliveries]);
      setCursor(r.nextCursor);
    } catch (err) {
      setProblem(problemOf(err));
    }
  }

  /** Resends, then follows the new delivery's first attempt for a few seconds and says how it went. */
  async function resend(deliveryId: string) {
    setProblem(undefined);
    setResendMessage(undefined);
    try {
      const r = await signed.webhooks.resendWebhookDelivery({ endpointId, deliveryId });
      setResendMessage({ key: "resendUnderway" });
      for (let i = 0; i < 40; i++) {
        await new Promise((ok) => setTimeout(ok, 250));
        const h = await signed.webhooks.listWebhookDeliveries({ endpointId, limit: 50 });
        const a = h.deliveries.find((d) => d.deliveryId === r.deliveryId);
        if (a !== undefined) {
          setResendMessage(
            a.errorClass === undefined ? { key: "resendOk", params: { status: a.httpStatus ?? "", ms: a.durationMs } } : { key: "resendFailed", params: { error: a.errorMessage ?? a.errorClass } },
          );
          break;
        }
      }
      setReload((n) => n + 1);
    } catch (err) {
      setProblem(problemOf(err));
    }
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
                          <button type="button" class="small-button" aria-label={t("resendLabel", { event: a.eventType, id: a.deliveryId.slice(-8) })} onClick={() => void resend(a.deliveryId)}>
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
