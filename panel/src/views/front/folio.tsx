// A reservation's folio: charges, payments, the balance, and a payment taken at the desk (FolioService).
import { useState } from "preact/hooks";
import { can, dateOf, formatMoney, problemOf, type Payment, type Problem, type Signed } from "../../api.ts";
import { formatDate, useI18n } from "../../i18n.ts";
import { Confirm, ErrorBox, PageTitle, useLoad } from "../common.tsx";
import { InvoicePanel } from "./invoice.tsx";
import { formatDay, parseAmount, propertyCode } from "./shared.tsx";

const methods = ["CASH", "CARD", "TRANSFER"] as const;

export function FolioPage({ signed, reservationId }: { signed: Signed; reservationId: string }) {
  const { t, lang } = useI18n();
  const code = propertyCode(signed);
  const folio = useLoad(() => signed.folio.getFolio({ propertyCode: code, reservationId }), [reservationId]);
  const [amount, setAmount] = useState("");
  const [method, setMethod] = useState<string>("CASH");
  const [amountError, setAmountError] = useState("");
  const [problem, setProblem] = useState<Problem | undefined>();
  const [done, setDone] = useState("");
  const [reversing, setReversing] = useState<Payment | undefined>();
  const f = folio.data?.folio;
  if (f === undefined)
    return (
      <section>
        <PageTitle>{t("folioTitleLoading")}</PageTitle>
        <ErrorBox problem={folio.problem} />
        {folio.loading && <p>{t("loading")}</p>}
      </section>
    );
  const money = (m: bigint) => formatMoney(lang, m, f.amountScale, f.currency);
  async function pay(e: Event) {
    e.preventDefault();
    setProblem(undefined);
    const minor = parseAmount(amount, f!.amountScale);
    if (minor === undefined || minor <= 0n) {
      setAmountError(t("amountInvalid"));
      return;
    }
    setAmountError("");
    try {
      await signed.folio.postPayment({ propertyCode: code, folioId: f!.id, amountMinor: minor, methodCode: method });
      setAmount("");
      setDone(t("paymentPosted", { amount: money(minor) }));
      folio.reload();
    } catch (err) {
      setProblem(problemOf(err));
    }
  }
  async function reverse(p: Payment) {
    setReversing(undefined);
    setProblem(undefined);
    try {
      const out = await signed.folio.reversePayment({ propertyCode: code, paymentId: p.id });
      setDone(t("paymentReversed", { amount: money(-(out.reversal?.amountMinor ?? 0n)) }));
      folio.reload();
    } catch (err) {
      setProblem(problemOf(err));
    }
  }
  const post = can(signed, "folio.post");
  // what is left of a payment to give back: neither a refund itself nor fully refunded already
  const reversible = (p: Payment) =>
    p.reversedPaymentId === undefined && p.reversedByPaymentId === undefined && p.amountMinor - p.refundedMinor > 0n;
  return (
    <section>
      <PageTitle>{t("folioTitle", { number: f.number, code: f.reservationCode })}</PageTitle>
      <p role="status" id="folio-done" class="result">
        {done}
      </p>
      <dl class="facts">
        <dt>{t("folioCharges")}</dt>
        <dd>{money(f.chargesMinor)}</dd>
        <dt>{t("folioPayments")}</dt>
        <dd>{money(f.paymentsMinor)}</dd>
        <dt>{t("factBalance")}</dt>
        <dd id="folio-balance">
          <strong>{money(f.balanceMinor)}</strong>
        </dd>
      </dl>
      <h2 id="charges-h">{t("folioCharges")}</h2>
      {f.charges.length === 0 ? (
        <p>{t("folioNoCharges")}</p>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="charges-h">
          <table id="charges">
            <thead>
              <tr>
                <th scope="col">{t("colDate")}</th>
                <th scope="col">{t("colCode")}</th>
                <th scope="col">{t("colDescription")}</th>
                <th scope="col">{t("colAmount")}</th>
              </tr>
            </thead>
            <tbody>
              {f.charges.map((c) => (
                <tr key={c.id}>
                  <td>{formatDay(lang, c.businessDate)}</td>
                  <td>{c.code}</td>
                  <td>{c.description}</td>
                  <td class="num">{money(c.amountMinor)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2 id="payments-h">{t("folioPayments")}</h2>
      {f.payments.length === 0 ? (
        <p>{t("folioNoPayments")}</p>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="payments-h">
          <table id="payments">
            <thead>
              <tr>
                <th scope="col">{t("colTime")}</th>
                <th scope="col">{t("colMethod")}</th>
                <th scope="col">{t("colAmount")}</th>
                {post && <th scope="col">{t("colAction")}</th>}
              </tr>
            </thead>
            <tbody>
              {f.payments.map((p) => (
                <tr key={p.id}>
                  <td>{formatDate(lang, dateOf(p.postedAt))}</td>
                  <td>
                    {p.methodCode}
                    {p.reversedPaymentId !== undefined && <> · {t("paymentIsReversal")}</>}
                  </td>
                  <td class="num">{money(p.amountMinor)}</td>
                  {post && (
                    <td>
                      {reversible(p) && (
                        <button
                          type="button"
                          class="small-button"
                          onClick={() => setReversing(p)}
                          aria-label={t("reversePaymentOf", { amount: money(p.amountMinor) })}
                        >
                          {t("reversePayment")}
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {reversing !== undefined && (
        <Confirm
          text={t("reverseConfirm", { amount: money(reversing.amountMinor - reversing.refundedMinor) })}
          onYes={() => void reverse(reversing)}
          onNo={() => setReversing(undefined)}
        />
      )}
      {post && (
        <form class="stack" onSubmit={pay} aria-labelledby="pay-h" noValidate>
          <h2 id="pay-h">{t("takePayment")}</h2>
          <label for="pay-amount">{t("colAmount")}</label>
          <input
            id="pay-amount"
            inputMode="decimal"
            value={amount}
            aria-invalid={amountError !== ""}
            aria-describedby={amountError !== "" ? "pay-amount-error" : undefined}
            onInput={(e) => setAmount(e.currentTarget.value)}
          />
          {amountError !== "" && (
            <p id="pay-amount-error" class="field-error">
              {amountError}
            </p>
          )}
          <label for="pay-method">{t("colMethod")}</label>
          <select id="pay-method" value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
            {methods.map((m) => (
              <option key={m} value={m}>
                {t(`pm_${m}`)}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="pay">
            {t("postPayment")}
          </button>
          <ErrorBox problem={problem} />
        </form>
      )}
      <InvoicePanel signed={signed} folioId={f.id} onChanged={folio.reload} />
      <p>
        <a href={`/panel/reservations/${reservationId}`}>{t("backToReservation", { code: f.reservationCode })}</a>
      </p>
    </section>
  );
}
