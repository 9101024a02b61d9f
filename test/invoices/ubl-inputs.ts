import { computeItem, itemsFromCharges } from "../../src/modules/invoices/lines.ts";
import type { UblInput } from "../../src/modules/invoices/ubl.ts";

/** The documents the UBL-TR tests render: a consumer's e-Arşiv with rooms, an extra and an exempt discounted line. */
const issuer: UblInput["issuer"] = {
  vkn: "1234567890",
  title: "Demo Turizm A.Ş.",
  taxOffice: "Beyoğlu",
  address: {
    street: "İstiklal Caddesi 1",
    district: "Beyoğlu",
    city: "İstanbul",
    postalZone: "34430",
    countryCode: "TR",
  },
};
const room = { kind: "ROOM" as const, code: "ROOM", description: "Konaklama (oda & kahvaltı)", amountMinor: 1500_00n };
const extra = { kind: "EXTRA" as const, code: "MINIBAR", description: "Minibar <şişe su>", amountMinor: 45_00n };

export function input(over: Partial<UblInput> = {}): UblInput {
  const items = itemsFromCharges([room, room, extra], (c) =>
    c.kind === "ROOM"
      ? { vatRateBp: 1000, vatExemptionCode: null, accommodationTaxRateBp: 200 }
      : { vatRateBp: 2000, vatExemptionCode: null, accommodationTaxRateBp: 0 },
  );
  items.push(
    computeItem(
      {
        lineNo: 3,
        chargeCode: "TRANSFER",
        description: "Havalimanı transferi",
        unitCode: "C62",
        quantity: 3,
        unitPriceMinor: 100_00n,
        discountMinor: 50_00n,
      },
      { vatRateBp: 0, vatExemptionCode: "351", accommodationTaxRateBp: 0 },
    ),
  );
  return {
    number: "DEM2026000000042",
    ettn: "019ad8a0-1c2b-7e3f-8a4b-5c6d7e8f9a0b",
    profileId: "EARSIVFATURA",
    typeCode: "SATIS",
    issueDate: "2026-11-22",
    issueTime: "13:05:09",
    currency: "TRY",
    amountScale: 100,
    issuer,
    buyer: {
      kind: "PERSON",
      tckn: "11111111111",
      firstName: "Çağrı",
      familyName: "Öztürk",
      address: { street: "", district: "", city: "", postalZone: "", countryCode: "DE" },
    },
    items,
    ...over,
  };
}

const company: UblInput["buyer"] = {
  kind: "COMPANY",
  vkn: "9876543217",
  title: "Güneş Seyahat Ltd. Şti.",
  taxOffice: "Çankaya",
  address: {
    street: "Atatürk Bulvarı 5",
    district: "Çankaya",
    city: "Ankara",
    postalZone: "06690",
    countryCode: "TR",
  },
  eFatura: true,
};

const returnOf = { number: "DEM2026000000041", issueDate: "2026-11-20" };

/** Every kind of document the service issues. */
export const documentKinds: Record<string, UblInput> = {
  "e-Arşiv SATIS to a consumer": input(),
  "e-Arşiv SATIS to a company outside e-Fatura": input({ buyer: { ...company, eFatura: false } }),
  "e-Fatura TEMELFATURA": input({ profileId: "TEMELFATURA", buyer: company }),
  "e-Fatura TICARIFATURA": input({ profileId: "TICARIFATURA", buyer: company }),
  "e-Arşiv IADE": input({ typeCode: "IADE", returnOf }),
  "e-Fatura IADE": input({ profileId: "TEMELFATURA", buyer: company, typeCode: "IADE", returnOf }),
};
