import { useState } from "preact/hooks";
import { login, verify, type Signed } from "../api.ts";
import { useI18n } from "../i18n.ts";
import { ErrorBox, PageTitle, useAction } from "./common.tsx";

export function SignIn({
  notice,
  onSigned,
  onEnded,
}: {
  notice: string | undefined;
  onSigned: (s: Signed) => void;
  onEnded: () => void;
}) {
  const { t } = useI18n();
  const [hotelCode, setHotelCode] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [challenge, setChallenge] = useState<{ id: string; maskedEmail: string } | undefined>();
  const [code, setCode] = useState("");
  const { busy, problem, setProblem, run } = useAction();

  const submitLogin = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const r = await login(hotelCode.trim(), email.trim(), password, onEnded);
      if (r.kind === "signed") onSigned(r.signed);
      else {
        setPassword("");
        setChallenge({ id: r.challengeId, maskedEmail: r.maskedEmail });
      }
    });
  };
  const submitCode = (e: Event) => {
    e.preventDefault();
    void run(async () => onSigned(await verify(challenge!.id, code.trim(), email.trim(), onEnded)));
  };

  return (
    <main id="main" class="narrow">
      <PageTitle>{challenge ? t("codeTitle") : t("signInTitle")}</PageTitle>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorBox problem={problem} />
      {challenge === undefined ? (
        <form onSubmit={submitLogin} class="stack">
          <label for="hotel">{t("hotelCode")}</label>
          <input
            id="hotel"
            name="hotel"
            required
            autoComplete="organization"
            aria-describedby="hotel-help"
            value={hotelCode}
            onInput={(e) => setHotelCode(e.currentTarget.value)}
          />
          <p id="hotel-help" class="small">
            {t("hotelCodeHelp")}
          </p>
          <label for="email">{t("email")}</label>
          <input
            id="email"
            name="email"
            type="email"
            required
            autoComplete="username"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
          <label for="password">{t("password")}</label>
          <input
            id="password"
            name="password"
            type="password"
            required
            autoComplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={busy}>
            {t("signIn")}
          </button>
        </form>
      ) : (
        <form onSubmit={submitCode} class="stack">
          <p>{t("codeSent", { email: challenge.maskedEmail })}</p>
          <label for="code">{t("code")}</label>
          <input
            id="code"
            name="code"
            required
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            maxLength={6}
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={busy}>
            {t("verify")}
          </button>
          <button
            type="button"
            onClick={() => {
              setChallenge(undefined);
              setCode("");
              setProblem(undefined);
            }}
          >
            {t("startAgain")}
          </button>
        </form>
      )}
    </main>
  );
}
