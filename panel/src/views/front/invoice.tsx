// A folio's invoice: a draft of what is not yet invoiced (FolioService.CreateInvoiceDraft for the buyer named in
// invoice-buyer.tsx, or an unknown consumer), its finalisation (FinalizeInvoice) and the issued invoice's e-document as XML or PDF (GetInvoiceDocument,
// saved by the browser). No RPC lists a folio's invoices, so the invoice in hand is kept in the address (?invoice=).
import { useState } from "preact/hooks";
import { can, formatMoney, InvoiceStatus, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { Confirm, ErrorBox, useAction, useLoad } from "../common.tsx";
import { formatDay, propertyCode } from "./shared.tsx";
import { BuyerFields, buyerOf, emptyBuyer, type BuyerForm } from "./invoice-buyer.tsx";

function remember(invoiceId: string): void {
  const url = new URL(location.href);
  url.searchParams.set("invoice", invoiceId);
  history.replaceState(null, "", url.pathname + url.search);
}

export function InvoicePanel({
  signed,
  folioId,
  onChanged,
}: {
  signed: Signed;
  folioId: string;
  onChanged: () => void;
}) {
  const { t, lang } = useI18n();
  const code = propertyCode(signed);
  const [invoiceId, setInvoiceId] = useState(() => new URLSearchParams(location.search).get("invoice") ?? "");
  const invoice = useLoad(
    async () =>
      invoiceId === "" ? undefined : (await signed.folio.getInvoice({ propertyCode: code, invoiceId })).invoice,
    [invoiceId],
  );
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState("");
  const { busy, problem, run: act } = useAction();
  const [buyer, setBuyer] = useState<BuyerForm>(emptyBuyer);
  const issue = can(signed, "invoices.issue");
  const inv = invoice.data;
  const money = (m: bigint) => (inv === undefined ? "" : formatMoney(lang, m, inv.amountScale, inv.currency));

  const draft = () =>
    act(async () => {
      const named = buyerOf(buyer);
      const out = await signed.folio.createInvoiceDraft({
        propertyCode: code,
        folioId,
        ...(named !== undefined ? { buyer: named } : {}),
      });
      const id = out.invoice?.id ?? "";
      remember(id);
      setInvoiceId(id);
      setDone(t("invoiceDrafted"));
      onChanged();
    });
  const finalise = () =>
    act(async () => {
      setConfirming(false);
      const out = await signed.folio.finalizeInvoice({ propertyCode: code, invoiceId });
      setDone(t("invoiceIssued", { number: out.invoice?.number ?? "" }));
      invoice.reload();
    });
  const download = (format: "xml" | "pdf") =>
    act(async () => {
      const doc = await signed.folio.getInvoiceDocument({ propertyCode: code, invoiceId, format });
      const url = URL.createObjectURL(new Blob([new Uint8Array(doc.content)], { type: doc.contentType }));
      const a = document.createElement("a");
      a.href = url;
      a.download = doc.fileName;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });

  if (!issue && inv === undefined) return null;
  return (
    <section aria-labelledby="invoice-h">
      <h2 id="invoice-h">{t("invoiceTitle")}</h2>
      <p role="status" id="invoice-done" class="result">
        {done}
      </p>
      <ErrorBox problem={invoice.problem} />
      {inv !== undefined && (
        <dl class="facts" id="invoice">
          <dt>{t("factStatus")}</dt>
          <dd id="invoice-status">
            {t(
              inv.status === InvoiceStatus.ISSUED
                ? "invoiceStatusIssued"
                : inv.status === InvoiceStatus.DRAFT
                  ? "invoiceStatusDraft"
                  : "invoiceStatusOther",
            )}
          </dd>
          <dt>{t("buyerTitle")}</dt>
          <dd id="invoice-buyer">{buyerText(inv.buyer)}</dd>
          <dt>{t("invoiceType")}</dt>
          <dd>{inv.type}</dd>
          {inv.number !== undefined && (
            <>
              <dt>{t("invoiceNumber")}</dt>
              <dd id="invoice-number">{inv.number}</dd>
            </>
          )}
          {inv.issueDate !== undefined && (
            <>
              <dt>{t("invoiceDate")}</dt>
              <dd>{formatDay(lang, inv.issueDate)}</dd>
            </>
          )}
          <dt>{t("invoiceNet")}</dt>
          <dd>{money(inv.netMinor)}</dd>
          <dt>{t("invoiceVat")}</dt>
          <dd>{money(inv.taxMinor)}</dd>
          <dt>{t("invoiceAccTax")}</dt>
          <dd>{money(inv.accommodationTaxMinor)}</dd>
          <dt>{t("colTotal")}</dt>
          <dd id="invoice-total">{money(inv.totalMinor)}</dd>
        </dl>
      )}
      {issue && (inv === undefined || inv.status !== InvoiceStatus.DRAFT) && (
        <BuyerFields value={buyer} onChange={setBuyer} problem={problem} />
      )}
      <div class="actions">
        {issue && (inv === undefined || inv.status !== InvoiceStatus.DRAFT) && (
          <button type="button" id="invoice-draft" disabled={busy} onClick={() => void draft()}>
            {t("invoiceDraft")}
          </button>
        )}
        {issue && inv?.status === InvoiceStatus.DRAFT && !confirming && (
          <button
            type="button"
            class="primary"
            id="invoice-finalise"
            disabled={busy}
            onClick={() => setConfirming(true)}
          >
            {t("invoiceFinalise")}
          </button>
        )}
        {inv?.status === InvoiceStatus.ISSUED && (
          <>
            <button type="button" id="invoice-xml" disabled={busy} onClick={() => void download("xml")}>
              {t("invoiceXml")}
            </button>
            <button type="button" id="invoice-pdf" disabled={busy} onClick={() => void download("pdf")}>
              {t("invoicePdf")}
            </button>
          </>
        )}
      </div>
      {confirming && inv !== undefined && (
        <Confirm
          text={t("invoiceFinaliseConfirm", { amount: money(inv.totalMinor) })}
          onYes={() => void finalise()}
          onNo={() => setConfirming(false)}
        />
      )}
      <div id="invoice-error">
        <ErrorBox problem={problem} />
      </div>
    </section>
  );
}

/** The invoice's buyer as the document names it: the company and its VKN, or the person and the TCKN. */
function buyerText(
  b: { kind: string; title: string; vkn: string; firstName: string; familyName: string; tckn: string } | undefined,
): string {
  if (b === undefined) return "";
  return b.kind === "COMPANY" ? `${b.title} · VKN ${b.vkn}` : `${b.firstName} ${b.familyName} · TCKN ${b.tckn}`;
}
