import { useState } from "preact/hooks";
import { type Signed } from "../api.ts";
import { useI18n } from "../i18n.ts";
import { statusKey } from "./webhooks.tsx";
import { Confirm, ErrorBox, SecretBox, useAction, useLoad } from "./common.tsx";

const types = [
  "partner_message.processed",
  "partner_message.rejected",
  "reservation.created",
  "reservation.updated",
  "reservation.cancelled",
  "ari.updated",
];

/**
 * API access > partner callbacks: the addresses where a partner client granted this property is told outcomes,
 * bookings and ARI. The partner gives the URL; the manager adds it here and hands over the secret shown once.
 */
export function PartnerCallbacks({
  signed,
  clients,
}: {
  signed: Signed;
  clients: { clientId: string; provider: string }[];
}) {
  const { t } = useI18n();
  const list = useLoad(() => signed.webhooks.listPartnerCallbacks({}), []);
  const [clientId, setClientId] = useState(clients[0]?.clientId ?? "");
  const [url, setUrl] = useState("");
  const [chosen, setChosen] = useState<string[]>(["partner_message.processed", "partner_message.rejected"]);
  const { problem, run } = useAction();
  const [secret, setSecret] = useState("");
  const [revoking, setRevoking] = useState("");
  async function add(e: Event) {
    e.preventDefault();
    await run(async () => {
      const r = await signed.webhooks.createPartnerCallback({ clientId, url, eventTypes: chosen });
      setSecret(r.secret);
      setUrl("");
      list.reload();
    });
  }
  async function revoke(id: string) {
    setRevoking("");
    await run(async () => {
      await signed.webhooks.deletePartnerCallback({ callbackId: id });
      list.reload();
    });
  }
  const provider = (id: string) => clients.find((c) => c.clientId === id)?.provider ?? id;
  return (
    <>
      <h2>{t("callbacksTitle")}</h2>
      <p class="small">{t("callbacksNote")}</p>
      <ErrorBox problem={list.problem ?? problem} />
      {secret !== "" && <SecretBox secret={secret} note={t("callbacksSecretNote")} onDone={() => setSecret("")} />}
      {list.data && list.data.callbacks.length === 0 && <p>{t("callbacksNone")}</p>}
      {list.data && list.data.callbacks.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={t("callbacksTitle")}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t("colProvider")}</th>
                <th scope="col">{t("colUrl")}</th>
                <th scope="col">{t("colEvents")}</th>
                <th scope="col">{t("colStatus")}</th>
                <th scope="col">
                  <span class="visually-hidden">{t("callbacksRevoke")}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.callbacks.map((c) => (
                <tr key={c.id}>
                  <td>{provider(c.clientId)}</td>
                  <td class="url">{c.url}</td>
                  <td>{c.eventTypes.join(", ")}</td>
                  <td>{t(statusKey(c.status))}</td>
                  <td>
                    {revoking === c.id ? (
                      <Confirm
                        text={t("callbacksConfirm")}
                        onYes={() => void revoke(c.id)}
                        onNo={() => setRevoking("")}
                      />
                    ) : (
                      <button type="button" class="danger" onClick={() => setRevoking(c.id)}>
                        {t("callbacksRevoke")}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {clients.length > 0 && (
        <form onSubmit={(e) => void add(e)} aria-labelledby="callback-add">
          <h3 id="callback-add">{t("callbacksAdd")}</h3>
          <label for="callback-client">{t("colProvider")}</label>
          <select id="callback-client" value={clientId} onChange={(e) => setClientId(e.currentTarget.value)}>
            {clients.map((c) => (
              <option key={c.clientId} value={c.clientId}>
                {c.provider} ({c.clientId})
              </option>
            ))}
          </select>
          <label for="callback-url">{t("urlLabel")}</label>
          <input
            id="callback-url"
            type="url"
            required
            value={url}
            placeholder="https://"
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
          <fieldset>
            <legend>{t("colEvents")}</legend>
            {types.map((type) => (
              <label key={type} class="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(type)}
                  onChange={(e) =>
                    setChosen(e.currentTarget.checked ? [...chosen, type] : chosen.filter((x) => x !== type))
                  }
                />{" "}
                <code>{type}</code>
              </label>
            ))}
          </fieldset>
          <button type="submit" class="primary">
            {t("callbacksAdd")}
          </button>
        </form>
      )}
    </>
  );
}
