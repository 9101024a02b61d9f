/**
 * The one form of an e-mail address the service stores and compares: Unicode NFC throughout (a composed and a
 * decomposed "josé" are one address) and the domain lower-cased (domains are case-insensitive, RFC 5321 2.4). The
 * local part keeps its case as typed: RFC 5321 lets a mail server tell `Jose` from `jose`, so mail goes out to the
 * address as the user gave it; finding a user compares case-insensitively (users' unique index on lower(email)).
 * Surrounding white space is dropped. Input without an `@` is returned in NFC (and refused by the validation).
 */
export function normalizeEmail(raw: string): string {
  const email = raw.trim().normalize("NFC");
  const at = email.lastIndexOf("@");
  if (at === -1) return email;
  return `${email.slice(0, at)}@${email.slice(at + 1).toLowerCase()}`;
}
