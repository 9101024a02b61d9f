// The night audit: the pre-checks, then the run with an explicit confirmation naming the business date it closes
// (RunMobileNightAudit's expected_business_date: a date moved meanwhile is refused, not closed twice).
import { useState } from "preact/hooks";
import { can, type Signed } from "../../api.ts";
import { lookup, useI18n } from "../../i18n.ts";
import { Confirm, ErrorBox, PageTitle, useAction, useLoad } from "../common.tsx";
import { formatDay } from "./shared.tsx";

export function NightAudit({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const audit = useLoad(() => signed.mobile.getMobileNightAudit({}), []);
  const [confirming, setConfirming] = useState(false);
  const { busy, problem, run: act } = useAction();
  const [done, setDone] = useState("");
  const date = audit.data?.businessDate ?? "";
  const mayRun = can(signed, "night_audit.run");

  async function run() {
    setConfirming(false);
    await act(async () => {
      const out = await signed.mobile.runMobileNightAudit({ expectedBusinessDate: date });
      setDone(
        t("auditDone", {
          from: formatDay(lang, out.previousBusinessDate),
          to: formatDay(lang, out.businessDate),
        }),
      );
      audit.reload();
    });
  }
  return (
    <section>
      <PageTitle>{t("nightAuditTitle")}</PageTitle>
      <p role="status" id="audit-done" class="result">
        {done}
      </p>
      <ErrorBox problem={audit.problem ?? problem} />
      {audit.loading && <p>{t("loading")}</p>}
      {audit.data && (
        <>
          <p id="audit-date">{t("nightAuditIntro", { date: formatDay(lang, date) })}</p>
          <h2>{t("checksTitle")}</h2>
          <ul class="notes" id="checks">
            {audit.data.checks.map((c) => (
              <li key={c.id} class={`check_${c.status}`}>
                <strong>{lookup(lang, `check_${c.status}`) ?? c.status}</strong> · {c.message}
                {c.count > 0 && <> ({c.count})</>}
              </li>
            ))}
          </ul>
          {!mayRun ? (
            <p>{t("auditNoPermission")}</p>
          ) : !audit.data.canRun ? (
            <p class="warning">{t("auditBlocked")}</p>
          ) : confirming ? (
            <Confirm
              text={t("runConfirm", { date: formatDay(lang, date) })}
              onYes={() => void run()}
              onNo={() => setConfirming(false)}
            />
          ) : (
            <button type="button" class="primary" id="run-audit" disabled={busy} onClick={() => setConfirming(true)}>
              {t("runAudit")}
            </button>
          )}
        </>
      )}
    </section>
  );
}
