import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from "node:crypto";
import { loadKeyFile } from "../../lib/key-file.ts";

/**
 * A signing secret: `whsec_` + 32 random bytes in standard base64 (44 characters), the form Standard Webhooks
 * libraries decode. Secrets made before were base64url (43 characters); they keep working (see hmacKeyOf).
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export { decodeKey } from "../../lib/key-file.ts";

/**
 * The key that encrypts signing secrets at rest: WEBHOOK_SECRET_KEY, else (development) a key generated
 * once into `${dataDir}/webhook-secret.key` (mode 0600). Several processes on one data directory share it.
 */
export function loadSecretKey(configured: string | undefined, dataDir: string): Buffer {
  return loadKeyFile(configured, dataDir, { variable: "WEBHOOK_SECRET_KEY", fileName: "webhook-secret.key" });
}

/** ed25519 keys are sealed bound to the address and their purpose (a ciphertext cannot move to the secret column). */
export const ed25519Aad = (endpointId: string) => `${endpointId}:ed25519`;

/** AES-256-GCM box for secrets at rest; the row id is the additional data, so a ciphertext cannot move rows. */
export interface SecretBox {
  seal(plain: string, rowId: string): string;
  open(sealed: string, rowId: string): string;
}

export function createSecretBox(keyBytes: Buffer): SecretBox {
  // A KeyObject: every attempt batch opens its addresses' secrets, and a Buffer key costs a throw per call.
  const key = createSecretKey(keyBytes);
  return {
    seal(plain, rowId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(rowId));
      const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return `v1.${iv.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${ct.toString("base64url")}`;
    },
    open(sealed, rowId) {
      const [version, iv, tag, ct] = sealed.split(".");
      if (version !== "v1" || iv === undefined || tag === undefined || ct === undefined)
        throw new Error("unknown sealed secret format");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(rowId));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}

/**
 * The `Service-Signature` header: `t=<unix seconds>,v1=<hex>` with one `v1` per secret (the current one first,
 * then the pre-rotation one during its 24 h overlap). Each value is the lowercase hex HMAC-SHA256 of
 * `<t>.<raw body>`, keyed with the UTF-8 bytes of the whole secret string (including `whsec_`); a KeyObject
 * of those bytes may stand for a secret (see SigningKeys).
 */
export function signatureHeader(
  secrets: readonly (string | KeyObject)[],
  unixSeconds: number,
  body: string | Buffer,
): string {
  const parts = [`t=${unixSeconds}`];
  for (const secret of secrets) {
    const mac = createHmac(
      "sha256",
      typeof secret === "string" ? createSecretKey(Buffer.from(secret, "utf8")) : secret,
    );
    mac.update(`${unixSeconds}.`);
    mac.update(body);
    parts.push(`v1=${mac.digest("hex")}`);
  }
  return parts.join(",");
}
