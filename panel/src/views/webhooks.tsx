import { useState } from "preact/hooks";
import { dateOf, WebhookEndpointStatus, type Signed } from "../api.ts";
import { formatDate, useI18n, type Key, type T } from "../i18n.ts";
import { navigate } from "../router.ts";
import { ErrorBox, PageTitle, SecretBox, useAction, useLoad } from "./common.tsx";

export const statusKey = (s: WebhookEndpointStatus): Key =>
  s === WebhookEndpointStatus.CLOSED
    ? "status_CLOSED"
    : s === WebhookEndpointStatus.DISABLED
      ? "status_DISABLED"
      : "status_OPEN";

export function Webhooks({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const list = useLoad(
    () => Promise.all([signed.webhooks.listWebhookEndpoints({}), signed.webhooks.listWebhookEventTypes({})]),
    [],
  );
  const endpoints = list.data?.[0].endpoints;
  const max = list.data?.[1].maxEndpoints ?? 10;
  return (
    <section>
      <PageTitle>{t("webhooksTitle")}</PageTitle>
      <ErrorBox problem={list.problem} />
      {list.loading && <p>{t("loading")}</p>}
      {endpoints && (
        <>
          <p id="limit">
            {endpoints.length >= max ? t("limitReached", { max }) : t("limitUsed", { n: endpoints.length, max })}
          </p>
          {endpoints.length < max && (
            <p>
              <a class="button primary" href="/panel/webhooks/new">
                {t("addAddress")}
              </a>
            </p>
          )}
          {endpoints.length === 0 ? (
            <p>{t("webhooksNone")}</p>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label={t("webhooksTitle")}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t("colUrl")}</th>
                    <th scope="col">{t("colEvents")}</th>
                    <th scope="col">{t("colStatus")}</th>
                    <th scope="col">{t("colLastSuccess")}</th>
                    <th scope="col">{t("colFailures")}</th>
                  </tr>
                </thead>
                <tbody>
                  {endpoints.map((e) => (
                    <tr key={e.id}>
                      <td class="url">
                        <a href={`/panel/webhooks/${e.id}`}>{e.url}</a>
                        {e.description && <div class="small">{e.description}</div>}
                      </td>
                      <td>{e.eventTypes.join(", ")}</td>
                      <td>
                        <span class={`pill ${statusKey(e.status)}`}>{t(statusKey(e.status))}</span>
                      </td>
                      <td>{e.lastSuccessAt ? formatDate(lang, dateOf(e.lastSuccessAt)) : t("never")}</td>
                      <td>{e.failuresSinceSuccess}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}

/** The checks the server makes on the text of an address (it also checks DNS: its reason is shown on refusal). */
function urlProblem(value: string, t: T): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return t("urlInvalid");
  }
  if (u.protocol !== "https:") return t("urlHttps");
  if (u.username !== "" || u.password !== "") return t("urlUserinfo");
  if (value.includes("#")) return t("urlFragment");
  if (u.port !== "" && Number(u.port) < 1024 && u.port !== "443") return t("urlPort");
  return undefined;
}

export function CreateWebhook({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  // The descriptions come from the server's event catalogue, in the panel's language.
  const catalogue = useLoad(
    () => signed.webhooks.listWebhookEventTypes({}, { headers: { "accept-language": lang } }),
    [lang],
  );
  const [url, setUrl] = useState("https://");
  const [description, setDescription] = useState("");
  const [types, setTypes] = useState<string[]>([]);
  const [urlError, setUrlError] = useState<string | undefined>();
  const [typesError, setTypesError] = useState<string | undefined>();
  const [created, setCreated] = useState<{ id: string; secret: string } | undefined>();
  const { busy, problem, run } = useAction();

  async function submit(e: Event) {
    e.preventDefault();
    const u = urlProblem(url.trim(), t);
    setUrlError(u);
    setTypesError(types.length === 0 ? t("needEvent") : undefined);
    if (u !== undefined || types.length === 0) {
      document.getElementById(u !== undefined ? "url" : "events-legend")?.focus();
      return;
    }
    const failed = await run(async () => {
      const r = await signed.webhooks.createWebhookEndpoint({ url: url.trim(), eventTypes: types, description });
      setCreated({ id: r.endpoint!.id, secret: r.secret });
    });
    const reason = failed?.fields.find((f) => f.field === "url")?.reason;
    if (reason) setUrlError(reason);
  }

  if (created) {
    return (
      <section>
        <PageTitle>{t("createTitle")}</PageTitle>
        <SecretBox secret={created.secret} onDone={() => navigate(`/panel/webhooks/${created.id}`)} />
      </section>
    );
  }
  return (
    <section>
      <PageTitle>{t("createTitle")}</PageTitle>
      <ErrorBox problem={problem} />
      <form onSubmit={submit} class="stack" noValidate>
        <label for="url">{t("urlLabel")}</label>
        <input
          id="url"
          type="url"
          required
          value={url}
          aria-invalid={urlError !== undefined}
          aria-describedby={urlError ? "url-help url-error" : "url-help"}
          onInput={(e) => setUrl(e.currentTarget.value)}
          class="mono"
        />
        <p id="url-help" class="small">
          {t("urlHelp")}
        </p>
        {urlError && (
          <p id="url-error" class="field-error">
            {urlError}
          </p>
        )}
        <label for="description">{t("descriptionLabel")}</label>
        <input
          id="description"
          maxLength={500}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
        <fieldset aria-describedby={typesError ? "events-help events-error" : "events-help"}>
          <legend id="events-legend" tabIndex={-1}>
            {t("eventsLegend")}
          </legend>
          {catalogue.data?.eventTypes.map((et) => (
            <div class="check" key={et.type}>
              <input
                type="checkbox"
                id={`ev-${et.type}`}
                checked={types.includes(et.type)}
                onChange={(e) =>
                  setTypes(e.currentTarget.checked ? [...types, et.type] : types.filter((x) => x !== et.type))
                }
                aria-describedby={`ev-${et.type}-d`}
              />
              <label for={`ev-${et.type}`}>
                <code>{et.type}</code>
              </label>
              <p id={`ev-${et.type}-d`} class="small">
                {et.description}
              </p>
            </div>
          ))}
          <p id="events-help" class="small">
            {t("eventsHelp")}
          </p>
          {typesError && (
            <p id="events-error" class="field-error">
              {typesError}
            </p>
          )}
        </fieldset>
        <ErrorBox problem={catalogue.problem} />
        <div>
          <button type="submit" class="primary" disabled={busy}>
            {t("createSubmit")}
          </button>{" "}
          <a class="button" href="/panel/webhooks">
            {t("cancel")}
          </a>
        </div>
      </form>
    </section>
  );
}
