import type { Clock } from "../../lib/clock.ts";
import {
  emptyGuestFields,
  maskSensitive,
  nameWords,
  normaliseDocumentNumber,
  sensitiveFields,
  type GuestFields,
  type Sensitive,
} from "./fields.ts";
import type { GuestRow } from "./guests.repository.ts";
import type { GuestVault } from "./vault.ts";

export interface Guest extends GuestFields {
  id: string;
  /** True when the sensitive fields are masked. */
  masked: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export type GuestCodec = ReturnType<typeof createGuestCodec>;

/** Rows to guests and back: the vault opens and seals the sensitive fields, masking hides them. */
export function createGuestCodec(vault: GuestVault, clock: Clock) {
  const openRow = (row: GuestRow): Sensitive => JSON.parse(vault.open(row.sealed, row.id)) as Sensitive;

  const fieldsOf = (row: GuestRow): GuestFields => ({
    ...emptyGuestFields,
    givenName: row.givenName,
    familyName: row.familyName,
    nationality: row.nationality,
    documentType: row.documentType,
    documentCountry: row.documentCountry,
    documentExpiry: row.documentExpiry,
    language: row.language,
    ...openRow(row),
  });

  const guestOf = (row: GuestRow, reveal: boolean): Guest => {
    const fields = fieldsOf(row);
    return {
      ...fields,
      ...(reveal ? {} : maskSensitive(fields)),
      id: row.id,
      masked: !reveal,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  };

  /** The row of `fields` (sealed, hashed) for guest `id`. */
  const rowOf = (
    base: Pick<GuestRow, "id" | "groupId" | "createdPropertyId" | "createdAt">,
    g: GuestFields,
  ): GuestRow => {
    const sensitive = Object.fromEntries(sensitiveFields.map((f) => [f, g[f]])) as Sensitive;
    sensitive.documentNumber = normaliseDocumentNumber(g.documentNumber);
    return {
      ...base,
      givenName: g.givenName.trim(),
      familyName: g.familyName.trim(),
      nameWords: ` ${nameWords(`${g.givenName} ${g.familyName}`).join(" ")} `,
      nationality: g.nationality,
      documentType: g.documentType,
      documentCountry: g.documentCountry,
      documentExpiry: g.documentExpiry,
      language: g.language,
      sealed: vault.seal(JSON.stringify(sensitive), base.id),
      keyId: vault.keyId,
      documentHash: sensitive.documentNumber === "" ? null : vault.hash(sensitive.documentNumber),
      updatedAt: clock.now(),
    };
  };

  return { openRow, fieldsOf, guestOf, rowOf, today: () => clock.now().toISOString().slice(0, 10) };
}
