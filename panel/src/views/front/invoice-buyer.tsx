// Who an invoice is made out to, asked before its draft (FolioService.CreateInvoiceDraft `buyer`): an unknown consumer
// (no buyer sent), a person (first and family name, TCKN of 11 digits; empty for a foreigner) or a company (title,
// VKN of 10 digits, tax office, address, registered for e-Fatura). The panel checks nothing the server checks: the
// server's refusal names the field (`buyer.vkn`, `buyer.title`, ...) and the reason is shown under that field.
import type { Problem } from "../../api.ts";
import { useI18n, type Key } from "../../i18n.ts";

type BuyerKind = "" | "PERSON" | "COMPANY";

export interface BuyerForm {
  kind: BuyerKind;
  name: string;
  familyName: string;
  taxNumber: string;
  taxOffice: string;
  street: string;
  district: string;
  city: string;
  postalZone: string;
  countryCode: string;
  eFatura: boolean;
}

export const emptyBuyer: BuyerForm = {
  kind: "",
  name: "",
  familyName: "",
  taxNumber: "",
  taxOffice: "",
  street: "",
  district: "",
  city: "",
  postalZone: "",
  countryCode: "TR",
  eFatura: false,
};

/** The request's `buyer`, or undefined for an unknown consumer. */
export function buyerOf(f: BuyerForm) {
  if (f.kind === "") return undefined;
  const address = {
    street: f.street,
    district: f.district,
    city: f.city,
    postalZone: f.postalZone,
    countryCode: f.countryCode,
  };
  return f.kind === "PERSON"
    ? { kind: "PERSON", firstName: f.name, familyName: f.familyName, tckn: f.taxNumber.trim(), address }
    : {
        kind: "COMPANY",
        title: f.name,
        vkn: f.taxNumber.trim(),
        taxOffice: f.taxOffice,
        eFatura: f.eFatura,
        address,
      };
}

type Field = Exclude<keyof BuyerForm, "kind" | "eFatura">;

// the server's field names (both tax numbers land on the one field)
const serverField: Record<string, Field> = {
  "buyer.firstName": "name",
  "buyer.title": "name",
  "buyer.familyName": "familyName",
  "buyer.tckn": "taxNumber",
  "buyer.vkn": "taxNumber",
  "buyer.taxOffice": "taxOffice",
  "buyer.address.street": "street",
  "buyer.address.district": "district",
  "buyer.address.city": "city",
  "buyer.address.postalZone": "postalZone",
  "buyer.address.countryCode": "countryCode",
};

export function BuyerFields(props: {
  value: BuyerForm;
  onChange: (f: BuyerForm) => void;
  problem: Problem | undefined;
}) {
  const { t } = useI18n();
  const f = props.value;
  const set = (next: Partial<BuyerForm>) => props.onChange({ ...f, ...next });
  const reasons = new Map<Field, string>();
  for (const x of props.problem?.fields ?? []) {
    const field = serverField[x.field];
    if (field !== undefined && !reasons.has(field)) reasons.set(field, x.reason);
  }
  const input = (field: Field, label: Key, extra: { inputMode?: "numeric"; maxLength?: number } = {}) => {
    const id = `buyer-${field}`;
    const reason = reasons.get(field);
    return (
      <>
        <label for={id}>{t(label)}</label>
        <input
          id={id}
          value={f[field]}
          autoComplete="off"
          {...extra}
          aria-invalid={reason !== undefined}
          aria-describedby={reason !== undefined ? `${id}-error` : undefined}
          onInput={(e) => set({ [field]: e.currentTarget.value })}
        />
        {reason !== undefined && (
          <p id={`${id}-error`} class="field-error">
            {reason}
          </p>
        )}
      </>
    );
  };
  return (
    <fieldset class="stack" id="buyer">
      <legend>{t("buyerTitle")}</legend>
      <label for="buyer-kind">{t("buyerKind")}</label>
      <select id="buyer-kind" value={f.kind} onChange={(e) => set({ kind: e.currentTarget.value as BuyerKind })}>
        <option value="">{t("buyerUnknown")}</option>
        <option value="PERSON">{t("buyerPerson")}</option>
        <option value="COMPANY">{t("buyerCompany")}</option>
      </select>
      {f.kind === "PERSON" && (
        <>
          {input("name", "givenName")}
          {input("familyName", "familyName")}
          {input("taxNumber", "buyerTckn", { inputMode: "numeric", maxLength: 11 })}
        </>
      )}
      {f.kind === "COMPANY" && (
        <>
          {input("name", "buyerCompanyName")}
          {input("taxNumber", "buyerVkn", { inputMode: "numeric", maxLength: 10 })}
          {input("taxOffice", "buyerTaxOffice")}
        </>
      )}
      {f.kind !== "" && (
        <>
          {input("street", "buyerStreet")}
          {input("district", "buyerDistrict")}
          {input("city", "buyerCity")}
          {input("postalZone", "buyerPostalZone")}
          {input("countryCode", "buyerCountry", { maxLength: 2 })}
        </>
      )}
      {f.kind === "COMPANY" && (
        <label class="inline">
          <input
            type="checkbox"
            id="buyer-efatura"
            checked={f.eFatura}
            onChange={(e) => set({ eFatura: e.currentTarget.checked })}
          />{" "}
          {t("buyerEFatura")}
        </label>
      )}
    </fieldset>
  );
}
