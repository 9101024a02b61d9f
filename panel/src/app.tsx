import { useEffect, useMemo, useState } from "preact/hooks";
import { logout, problemOf, restore, switchProperty, type Problem, type Signed } from "./api.ts";
import { I18nContext, initialLang, saveLang, translator, useI18n, type Lang } from "./i18n.ts";
import { navigate, onLinkClick, usePath } from "./router.ts";
import { ApiAccess } from "./views/api-access.tsx";
import { ErrorBox, PageTitle, useLoad } from "./views/common.tsx";
import { Notifications } from "./views/notifications.tsx";
import { SignIn } from "./views/sign-in.tsx";
import { WebhookDetail } from "./views/webhook-detail.tsx";
import { CreateWebhook, Webhooks } from "./views/webhooks.tsx";

export function App() {
  const [lang, setLang] = useState<Lang>(initialLang);
  const i18n = useMemo(() => ({ lang, t: translator(lang) }), [lang]);
  const [notice, setNotice] = useState<string | undefined>();
  const ended = () => {
    setSigned(undefined);
    setNotice("sessionEnded");
  };
  const [signed, setSigned] = useState<Signed | undefined>(() => restore(ended));
  const path = usePath();
  const [, setVersion] = useState(0);

  useEffect(() => saveLang(lang), [lang]);
  useEffect(() => {
    if (signed === undefined && path !== "/panel/sign-in") navigate("/panel/sign-in", true);
    if (signed !== undefined && (path === "/panel" || path === "/panel/" || path === "/panel/sign-in"))
      navigate("/panel/api-access", true);
  }, [signed, path]);

  return (
    <I18nContext.Provider value={i18n}>
      <div onClick={onLinkClick}>
        <a class="skip" href="#main">
          {i18n.t("skip")}
        </a>
        {signed === undefined ? (
          <>
            <header class="bar">
              <span class="brand">{i18n.t("appTitle")}</span>
              <LanguageSwitch lang={lang} setLang={setLang} />
            </header>
            <SignIn
              notice={
                notice === "sessionEnded"
                  ? i18n.t("sessionEnded")
                  : notice === "signedOut"
                    ? i18n.t("signedOut")
                    : undefined
              }
              onSigned={(s) => {
                setNotice(undefined);
                setSigned(s);
              }}
              onEnded={ended}
            />
          </>
        ) : (
          <Shell
            key={signed.profile.activePropertyId}
            signed={signed}
            path={path}
            lang={lang}
            setLang={setLang}
            onSwitched={() => setVersion((v) => v + 1)}
            onSignedOut={() => {
              setSigned(undefined);
              setNotice("signedOut");
            }}
          />
        )}
      </div>
    </I18nContext.Provider>
  );
}

function LanguageSwitch({ lang, setLang }: { lang: Lang; setLang: (l: Lang) => void }) {
  const { t } = useI18n();
  return (
    <label class="inline">
      <span>{t("language")}</span>{" "}
      <select id="lang" value={lang} onChange={(e) => setLang(e.currentTarget.value as Lang)}>
        <option value="tr" lang="tr">
          Türkçe
        </option>
        <option value="en" lang="en">
          English
        </option>
      </select>
    </label>
  );
}

function Shell(props: {
  signed: Signed;
  path: string;
  lang: Lang;
  setLang: (l: Lang) => void;
  onSwitched: () => void;
  onSignedOut: () => void;
}) {
  const { signed, path } = props;
  const { t } = useI18n();
  const [problem, setProblem] = useState<Problem | undefined>();
  const profile = signed.profile;
  const active = profile.properties.find((p) => p.id === profile.activePropertyId);
  const canManage = active?.permissions.includes("integrations.manage") === true;
  const notes = useLoad(() => signed.webhooks.listNotifications({ limit: 200 }), [path]);
  useEffect(() => {
    const timer = setInterval(notes.reload, 30_000);
    return () => clearInterval(timer);
  }, []);
  const unread = notes.data?.notifications.filter((n) => n.readAt === undefined).length ?? 0;

  async function onProperty(id: string) {
    setProblem(undefined);
    try {
      await switchProperty(signed, id);
      navigate("/panel/api-access");
      props.onSwitched();
    } catch (err) {
      setProblem(problemOf(err));
    }
  }
  async function signOut() {
    try {
      await logout(signed);
    } finally {
      props.onSignedOut();
    }
  }

  const current = (href: string) =>
    path === href || (href === "/panel/webhooks" && path.startsWith("/panel/webhooks")) ? "page" : undefined;
  let page;
  const detail = /^\/panel\/webhooks\/([^/]+)$/.exec(path);
  if (path === "/panel/notifications") page = <Notifications signed={signed} onChanged={notes.reload} />;
  else if (!canManage) page = <NoAccess property={active?.name ?? ""} />;
  else if (path === "/panel/webhooks") page = <Webhooks signed={signed} />;
  else if (path === "/panel/webhooks/new") page = <CreateWebhook signed={signed} />;
  else if (detail) page = <WebhookDetail key={detail[1]} signed={signed} id={decodeURIComponent(detail[1]!)} />;
  else page = <ApiAccess signed={signed} />;

  return (
    <>
      <header class="bar">
        <span class="brand">{t("appTitle")}</span>
        <label class="inline">
          <span>{t("property")}</span>{" "}
          <select
            id="property"
            value={profile.activePropertyId}
            onChange={(e) => void onProperty(e.currentTarget.value)}
          >
            {profile.properties.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({p.code})
              </option>
            ))}
          </select>
        </label>
        <a
          class="bell"
          href="/panel/notifications"
          aria-label={t("bell", { n: unread })}
          aria-current={current("/panel/notifications")}
        >
          <svg aria-hidden="true" viewBox="0 0 24 24" width="24" height="24" focusable="false">
            <path
              fill="currentColor"
              d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z"
            />
          </svg>
          {unread > 0 && (
            <span class="badge" aria-hidden="true">
              {unread}
            </span>
          )}
        </a>
        <LanguageSwitch lang={props.lang} setLang={props.setLang} />
        <span class="small who">{t("signedInAs", { email: signed.email })}</span>
        <button type="button" onClick={() => void signOut()}>
          {t("signOut")}
        </button>
      </header>
      <nav aria-label={t("navIntegrations")}>
        <ul>
          <li>
            <a href="/panel/api-access" aria-current={current("/panel/api-access")}>
              {t("navApiAccess")}
            </a>
          </li>
          <li>
            <a href="/panel/webhooks" aria-current={current("/panel/webhooks")}>
              {t("navWebhooks")}
            </a>
          </li>
          <li>
            <a href="/panel/notifications" aria-current={current("/panel/notifications")}>
              {t("navNotifications")}
            </a>
          </li>
        </ul>
      </nav>
      <main id="main">
        <ErrorBox problem={problem} />
        {page}
      </main>
    </>
  );
}

function NoAccess({ property }: { property: string }) {
  const { t } = useI18n();
  return (
    <section>
      <PageTitle>{t("noAccessTitle")}</PageTitle>
      <p>{t("noAccessBody", { property })}</p>
    </section>
  );
}
