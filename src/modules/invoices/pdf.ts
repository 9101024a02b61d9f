import { readFileSync } from "node:fs";
import PDFDocument from "pdfkit";
import type { Buyer } from "./buyer.ts";
import { invoiceTotals } from "./lines.ts";
import { formatAmount, formatPercent, type UblInput } from "./ubl.ts";

/**
 * The printable view of an issued invoice (A4, pdfkit): number, ETTN, date and time, profile, the parties, one
 * row per line with its VAT rate, the totals per VAT rate and accommodation tax, and the payable amount. Text is
 * set in DejaVu Sans (shipped under assets/fonts with its licence), which has every Turkish letter (ç ğ ı İ ö ş ü).
 */
// Read once: each document then parses the font from memory instead of the disk.
const regular = readFileSync(new URL("../../../assets/fonts/DejaVuSans.ttf", import.meta.url));
const bold = readFileSync(new URL("../../../assets/fonts/DejaVuSans-Bold.ttf", import.meta.url));

const titles: Record<UblInput["profileId"], string> = {
  EARSIVFATURA: "e-Arşiv Fatura",
  TEMELFATURA: "e-Fatura",
  TICARIFATURA: "e-Fatura",
};

function buyerLines(b: Buyer): string[] {
  const a = b.address;
  const place = [a.street, [a.district, a.city].filter((x) => x !== "").join(" / "), a.countryCode].filter(
    (x) => x !== "",
  );
  if (b.kind === "COMPANY") return [b.title, `VKN: ${b.vkn}`, `Vergi Dairesi: ${b.taxOffice}`, ...place];
  return [`${b.firstName} ${b.familyName}`, `TCKN: ${b.tckn}`, ...place];
}

export function renderInvoicePdf(d: UblInput): Promise<Buffer> {
  const money = (m: bigint) => `${formatAmount(m, d.amountScale)} ${d.currency}`;
  const totals = invoiceTotals(d.items);
  const doc = new PDFDocument({ size: "A4", margin: 40, info: { Title: `${titles[d.profileId]} ${d.number}` } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("data", (c: Buffer) => chunks.push(c));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.registerFont("regular", regular);
  doc.registerFont("bold", bold);
  doc
    .font("bold")
    .fontSize(16)
    .text(`${titles[d.profileId]}${d.typeCode === "IADE" ? " (İade)" : ""}`);
  doc.font("regular").fontSize(9).moveDown(0.5);
  doc.text(`Fatura No: ${d.number}`);
  doc.text(`ETTN: ${d.ettn}`);
  doc.text(`Fatura Tarihi: ${d.issueDate} ${d.issueTime}`);
  doc.text(`Senaryo: ${d.profileId}   Fatura Tipi: ${d.typeCode}`);
  if (d.returnOf !== undefined) doc.text(`İade edilen fatura: ${d.returnOf.number} (${d.returnOf.issueDate})`);
  doc.moveDown();
  doc.font("bold").text("Satıcı");
  doc.font("regular").text([d.issuer.title, `VKN: ${d.issuer.vkn}`, `Vergi Dairesi: ${d.issuer.taxOffice}`].join("\n"));
  doc.text([d.issuer.address.street, `${d.issuer.address.district} / ${d.issuer.address.city}`].join("\n"));
  doc.moveDown();
  doc.font("bold").text("Alıcı");
  doc.font("regular").text(buyerLines(d.buyer).join("\n"));
  doc.moveDown();
  doc
    .font("bold")
    .text("Sıra | Açıklama | Miktar | Birim Fiyat (KDV dahil) | İskonto | KDV % | KDV | Konaklama Vergisi | Tutar");
  doc.font("regular");
  for (const it of d.items) {
    doc.text(
      [
        it.lineNo,
        it.description,
        `${it.quantity} ${it.unitCode === "DAY" ? "gece" : "adet"}`,
        money(it.unitPriceMinor),
        money(it.discountMinor),
        `%${formatPercent(it.vatRateBp)}${it.vatExemptionCode !== null ? ` (istisna ${it.vatExemptionCode})` : ""}`,
        money(it.vatMinor),
        money(it.accommodationTaxMinor),
        money(it.grossMinor),
      ].join(" | "),
    );
  }
  doc.moveDown();
  doc.text(`Mal/Hizmet Toplam Tutarı (KDV hariç): ${money(totals.netMinor)}`);
  for (const r of totals.vatByRate)
    doc.text(`Hesaplanan KDV (%${formatPercent(r.vatRateBp)}) matrah ${money(r.taxableMinor)}: ${money(r.taxMinor)}`);
  for (const r of totals.accommodationByRate)
    doc.text(`Konaklama Vergisi (%${formatPercent(r.rateBp)}) matrah ${money(r.taxableMinor)}: ${money(r.taxMinor)}`);
  doc.font("bold").text(`Ödenecek Tutar: ${money(totals.totalMinor)}`);
  doc.end();
  return done;
}
