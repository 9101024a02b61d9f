import { useState } from "preact/hooks";
import { dateOf, WebhookEndpointStatus, type Signed, type WebhookEndpoint } from "../api.ts";
import { formatDate, useI18n } from "../i18n.ts";
import { navigate } from "../router.ts";
import { Confirm, ErrorBox, PageTitle, SecretBox, useAction, useLoad } from "./common.tsx";
import { History } from "./delivery-history.tsx";
import { statusKey } from "./webhooks.tsx";

type Pending = "rotate" | "disable" | "delete" | undefined;
import type { Msg } from "./delivery-history.tsx";

export function WebhookDetail({ signed, id }: { signed: Signed; id: string }) {
  const { t, lang } = useI18n();
  const loaded = useLoad(() => signed.webhooks.getWebhookEndpoint({ endpointId: id }), [id]);
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | undefined>();
  const [secret, setSecret] = useState<string | undefined>();
  const [pending, setPending] = useState<Pending>();
  const [message, setMessage] = useState<Msg>();
  const { busy, problem, run } = useAction();
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

  async function act(work: () => Promise<Msg | void>) {
    setMessage(undefined);
    await run(async () => {
      const msg = await work();
      if (msg) setMessage(msg);
    });
    setPending(undefined);
  }
  const test = () =>
    act(async () => {
      const r = await signed.webhooks.testWebhookEndpoint({ endpointId: ep.id });
      setHistoryTick((n) => n + 1);
      return r.error === undefined
        ? { key: "testOk", params: { status: r.httpStatus ?? "", ms: r.durationMs } }
        : {
            key: "testFailed",
            params: { ms: r.durationMs, error: r.httpStatus ? `HTTP ${r.httpStatus}: ${r.error}` : r.error },
          };
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
          {t("detailClosed", {
            at: formatDate(lang, dateOf(ep.closedAt)),
            reason: (ep.closedReason ?? "").replace(/\.$/, ""),
          })}
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
        <SecretBox
          secret={secret}
          note={t("secretOverlap", { at: overlapUntil })}
          onDone={() => setSecret(undefined)}
        />
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
      {pending === "rotate" && (
        <Confirm text={t("confirmRotate")} onYes={() => void rotate()} onNo={() => setPending(undefined)} />
      )}
      {pending === "disable" && (
        <Confirm text={t("confirmDisable")} onYes={() => void disable()} onNo={() => setPending(undefined)} />
      )}
      {pending === "delete" && (
        <Confirm text={t("confirmDelete")} onYes={() => void remove()} onNo={() => setPending(undefined)} />
      )}
      <p role="status" id="action-result" class="result">
        {message && t(message.key, message.params)}
      </p>
      <ErrorBox problem={problem} />
      <History signed={signed} endpointId={ep.id} tick={historyTick} />
    </section>
  );
}
