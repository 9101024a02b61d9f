import { dateOf, status, type Signed } from "../api.ts";
import { formatDate, lookup, useI18n } from "../i18n.ts";
import { ErrorBox, PageTitle, useLoad } from "./common.tsx";
import { PartnerCallbacks } from "./partner-callbacks.tsx";

export function ApiAccess({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const st = useLoad(() => status.getStatus({}), []);
  const clients = useLoad(() => signed.apiAccess.listApiClients({}), []);
  return (
    <section>
      <PageTitle>{t("apiTitle")}</PageTitle>
      <h2>{t("apiStatus")}</h2>
      <ErrorBox problem={st.problem} />
      {st.data && (
        <p class="status-line">
          <span
            class={`dot ${st.data.status === "operational" && st.data.partnerApi === "enabled" ? "ok" : "off"}`}
            aria-hidden="true"
          />
          <strong id="api-status">{lookup(lang, `status_${st.data.status}`) ?? st.data.status}</strong>
          {" · "}
          <span class="tag">{t("versionBeta", { v: st.data.apiVersion })}</span>
          {" · "}
          <span id="partner-api">{st.data.partnerApi === "enabled" ? t("partnerOn") : t("partnerOff")}</span>
        </p>
      )}
      <h2>{t("clientsTitle")}</h2>
      <p class="small">{t("clientsNote")}</p>
      <ErrorBox problem={clients.problem} />
      {clients.loading && <p>{t("loading")}</p>}
      {clients.data && clients.data.clients.length === 0 && <p>{t("clientsNone")}</p>}
      {clients.data && clients.data.clients.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={t("clientsTitle")}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t("colProvider")}</th>
                <th scope="col">{t("colName")}</th>
                <th scope="col">{t("colScopes")}</th>
                <th scope="col">{t("colEnvironment")}</th>
                <th scope="col">{t("colCreated")}</th>
                <th scope="col">{t("colLastToken")}</th>
              </tr>
            </thead>
            <tbody>
              {clients.data.clients.map((c) => (
                <tr key={c.clientId}>
                  <td>{c.provider}</td>
                  <td>
                    {c.name}
                    <br />
                    <code class="small">{c.clientId}</code>
                  </td>
                  <td>{c.scopes.join(", ")}</td>
                  <td>{c.environment === "live" ? t("envLive") : t("envTest")}</td>
                  <td>{formatDate(lang, dateOf(c.createdAt))}</td>
                  <td>{c.lastTokenAt ? formatDate(lang, dateOf(c.lastTokenAt)) : t("never")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {clients.data && (
        <PartnerCallbacks
          signed={signed}
          clients={clients.data.clients.map((c) => ({ clientId: c.clientId, provider: c.provider }))}
        />
      )}
      <h2>{t("docsTitle")}</h2>
      <p>{t("docsBody")}</p>
      <ul>
        <li>
          <a href="/docs">{t("docsReference")}</a> (<code>{`${location.origin}/docs`}</code>)
        </li>
        <li>
          <a href="/openapi.json">{t("docsOpenapi")}</a> (<code>{`${location.origin}/openapi.json`}</code>)
        </li>
      </ul>
    </section>
  );
}
