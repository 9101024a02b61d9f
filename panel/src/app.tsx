import type { JSX } from "preact";
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
import { FolioPage } from "./views/front/folio.tsx";
import { NewReservation } from "./views/front/new-reservation.tsx";
import { NightAudit } from "./views/front/night-audit.tsx";
import { Rates } from "./views/front/rates.tsx";
import { ReservationPage } from "./views/front/reservation.tsx";
import { Reservations } from "./views/front/reservations.tsx";
import { Rooms } from "./views/front/rooms.tsx";
import { Needs } from "./views/front/shared.tsx";
import { Today } from "./views/front/today.tsx";

const integrationPaths = ["/panel/api-access", "/panel/webhooks", "/panel/notifications"];
const isIntegrations = (path: string) => integrationPaths.some((p) => path === p || path.startsWith(`${p}/`));

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
      navigate("/panel/today", true);
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
      // another property's records are not found there: back to the section's first page
      navigate(isIntegrations(path) ? "/panel/api-access" : "/panel/today");
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
  const section = (href: string, prefix: string) =>
    path === href ? "page" : path.startsWith(prefix) ? "true" : undefined;
  let page;
  const detail = /^\/panel\/webhooks\/([^/]+)$/.exec(path);
  const reservation = /^\/panel\/reservations\/([^/]+)$/.exec(path);
  const folio = /^\/panel\/reservations\/([^/]+)\/folio$/.exec(path);
  const view = (permission: string, title: string, body: JSX.Element) => (
    <Needs signed={signed} permission={permission} title={title}>
      {body}
    </Needs>
  );
  if (path === "/panel/notifications") page = <Notifications signed={signed} onChanged={notes.reload} />;
  else if (path === "/panel/today") page = view("dashboard.view", t("todayTitle"), <Today signed={signed} />);
  else if (path === "/panel/reservations")
    page = view("reservations.view", t("reservationsTitle"), <Reservations signed={signed} />);
  else if (path === "/panel/reservations/new")
    page = view("reservations.create", t("newReservationTitle"), <NewReservation signed={signed} />);
  else if (reservation)
    page = view(
      "reservations.view",
      t("reservationsTitle"),
      <ReservationPage key={reservation[1]} signed={signed} id={decodeURIComponent(reservation[1]!)} />,
    );
  else if (folio)
    page = view(
      "folio.view",
      t("folioTitleLoading"),
      <FolioPage key={folio[1]} signed={signed} reservationId={decodeURIComponent(folio[1]!)} />,
    );
  else if (path === "/panel/rooms") page = view("reservations.view", t("roomsRackTitle"), <Rooms signed={signed} />);
  else if (path === "/panel/rates") page = view("reservations.view", t("ratesTitle"), <Rates signed={signed} />);
  else if (path === "/panel/night-audit") page = <NightAudit signed={signed} />;
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
      <nav aria-label={t("navMain")} class="main-nav">
        <ul>
          <li>
            <a href="/panel/today" aria-current={current("/panel/today")}>
              {t("navToday")}
            </a>
          </li>
          <li>
            <a href="/panel/reservations" aria-current={section("/panel/reservations", "/panel/reservations/")}>
              {t("navReservations")}
            </a>
          </li>
          <li>
            <a href="/panel/rooms" aria-current={current("/panel/rooms")}>
              {t("navRooms")}
            </a>
          </li>
          <li>
            <a href="/panel/rates" aria-current={current("/panel/rates")}>
              {t("navRates")}
            </a>
          </li>
          <li>
            <a href="/panel/night-audit" aria-current={current("/panel/night-audit")}>
              {t("navNightAudit")}
            </a>
          </li>
          <li>
            <a href="/panel/api-access" aria-current={isIntegrations(path) ? "true" : undefined}>
              {t("navIntegrationsLink")}
            </a>
          </li>
        </ul>
      </nav>
      {isIntegrations(path) && (
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
      )}
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
