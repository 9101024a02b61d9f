import { AppError } from "../../errors.ts";
import { PLACEHOLDER_TCKN, isValidTckn, isValidVkn } from "./tax-ids.ts";

/** A postal address as the documents print it. */
export interface Address {
  street: string;
  district: string;
  city: string;
  postalZone: string;
  /** ISO 3166-1 alpha-2, e.g. TR. */
  countryCode: string;
}

/** Who the invoice is made out to: a person by TCKN or a company by VKN. */
export type Buyer =
  | { kind: "PERSON"; tckn: string; firstName: string; familyName: string; address: Address }
  | {
      kind: "COMPANY";
      vkn: string;
      title: string;
      taxOffice: string;
      address: Address;
      /** Registered for e-Fatura (set by the operator): such a buyer gets an e-Fatura, everyone else an e-Arşiv. */
      eFatura: boolean;
      /** The e-Fatura profile; absent on buyers recorded before it existed, which means TEMELFATURA. */
      eFaturaProfile?: EFaturaProfile;
    };

/** TEMELFATURA (basic) or TICARIFATURA (commercial: the buyer accepts or rejects it through GİB). */
export type EFaturaProfile = "TEMELFATURA" | "TICARIFATURA";

export type BuyerInput =
  | { kind: "PERSON"; tckn?: string; firstName: string; familyName: string; address?: Partial<Address> }
  | {
      kind: "COMPANY";
      vkn: string;
      title: string;
      taxOffice: string;
      address?: Partial<Address>;
      eFatura: boolean;
      /** "", TEMELFATURA or TICARIFATURA. */
      eFaturaProfile?: string;
    };

/** The buyer of an invoice drafted without one: the placeholder TCKN for an unknown consumer. */
const UNKNOWN_BUYER: Buyer = {
  kind: "PERSON",
  tckn: PLACEHOLDER_TCKN,
  firstName: "Nihai",
  familyName: "Tüketici",
  address: { street: "", district: "", city: "", postalZone: "", countryCode: "TR" },
};

function invalid(field: string, reason: string): AppError {
  return new AppError("validation_failed", `${field}: ${reason}`, { details: [{ field, reason }] });
}

function text(value: string | undefined, field: string, max: number, required: boolean): string {
  const v = (value ?? "").trim();
  if (required && v === "") throw invalid(field, "is required");
  if (v.length > max) throw invalid(field, `at most ${max} characters`);
  return v;
}

function address(a: Partial<Address> | undefined, companyRequired: boolean): Address {
  const countryCode = text(a?.countryCode, "buyer.address.countryCode", 2, false).toUpperCase() || "TR";
  if (!/^[A-Z]{2}$/.test(countryCode)) throw invalid("buyer.address.countryCode", "must be two letters (ISO 3166)");
  return {
    street: text(a?.street, "buyer.address.street", 200, companyRequired),
    district: text(a?.district, "buyer.address.district", 100, false),
    city: text(a?.city, "buyer.address.city", 100, companyRequired),
    postalZone: text(a?.postalZone, "buyer.address.postalZone", 20, false),
    countryCode,
  };
}

/** Checks a buyer as GİB would: TCKN or VKN checksum, the names and (for companies) tax office and address. 422 naming the field. */
export function validateBuyer(input: BuyerInput | undefined): Buyer {
  if (input === undefined) return UNKNOWN_BUYER;
  if (input.kind === "PERSON") {
    const tckn = (input.tckn ?? "").trim() || PLACEHOLDER_TCKN;
    if (!isValidTckn(tckn))
      throw invalid("buyer.tckn", `not a valid TCKN (11 digits with checksum, or ${PLACEHOLDER_TCKN})`);
    return {
      kind: "PERSON",
      tckn,
      firstName: text(input.firstName, "buyer.firstName", 100, true),
      familyName: text(input.familyName, "buyer.familyName", 100, true),
      address: address(input.address, false),
    };
  }
  const vkn = input.vkn.trim();
  if (!isValidVkn(vkn)) throw invalid("buyer.vkn", "not a valid VKN (10 digits with checksum)");
  return {
    kind: "COMPANY",
    vkn,
    title: text(input.title, "buyer.title", 250, true),
    taxOffice: text(input.taxOffice, "buyer.taxOffice", 100, true),
    address: address(input.address, true),
    eFatura: input.eFatura,
    eFaturaProfile: eFaturaProfile(input.eFaturaProfile, input.eFatura),
  };
}

function eFaturaProfile(value: string | undefined, eFatura: boolean): EFaturaProfile {
  const v = (value ?? "").trim() || "TEMELFATURA";
  if (v !== "TEMELFATURA" && v !== "TICARIFATURA")
    throw invalid("buyer.eFaturaProfile", "must be TEMELFATURA or TICARIFATURA");
  if (v === "TICARIFATURA" && !eFatura)
    throw invalid("buyer.eFaturaProfile", "TICARIFATURA is for a buyer registered for e-Fatura");
  return v;
}

/** The profile of a buyer's invoices: EARSIVFATURA outside e-Fatura, else the buyer's e-Fatura profile. */
export function profileOf(buyer: Buyer): EFaturaProfile | "EARSIVFATURA" {
  if (buyer.kind !== "COMPANY" || !buyer.eFatura) return "EARSIVFATURA";
  return buyer.eFaturaProfile ?? "TEMELFATURA";
}
