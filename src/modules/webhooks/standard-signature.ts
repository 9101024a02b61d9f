import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from "node:crypto";

/**
 * Standard Webhooks signatures (`webhook-signature`), next to `Service-Signature`. The signed content
 * is `<webhook-id>.<webhook-timestamp>.<raw body>`; each signature is `<version>,<base64>` and several are
 * separated by spaces: `v1` (HMAC-SHA256 keyed with the bytes base64-decoded after `whsec_`) for every secret in
 * use, and `v1a` (ed25519) for every key pair of an address that chose asymmetric signatures.
 */
export interface SigningKeys {
  /**
   * One entry per secret in use, current first, then the pre-rotation one during its 24 h overlap: the
   * `Service-Signature` key (the UTF-8 bytes of the whole secret) and the Standard Webhooks key (the bytes
   * base64-decoded after `whsec_`), as KeyObjects (an HMAC keyed with a Buffer costs about 5x one keyed with a
   * KeyObject in Node 24: the key type checks throw and catch).
   */
  hmac: readonly { service: KeyObject; standard: KeyObject }[];
  /** ed25519 private keys, current first, then the pre-rotation one during its overlap (empty: HMAC only). */
  ed25519: readonly KeyObject[];
}

/** The signing keys of an address's secrets (current first) and ed25519 private keys. */
export function signingKeys(secrets: readonly string[], ed25519: readonly KeyObject[] = []): SigningKeys {
  return {
    hmac: secrets.map((s) => ({
      service: createSecretKey(Buffer.from(s, "utf8")),
      standard: createSecretKey(hmacKeyOf(s)),
    })),
    ed25519,
  };
}

/**
 * The HMAC key of a `whsec_` secret: the decoded bytes after the prefix. Node's base64 decoder accepts both the
 * standard alphabet (new secrets) and base64url (secrets made before standard base64), so old secrets still
 * sign; only a receiver library that insists on the standard alphabet needs a rotated secret.
 */
export function hmacKeyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

export function standardSignature(keys: SigningKeys, id: string, unixSeconds: number, body: string | Buffer): string {
  const prefix = `${id}.${unixSeconds}.`;
  const parts: string[] = [];
  for (const { standard } of keys.hmac) {
    const mac = createHmac("sha256", standard);
    mac.update(prefix);
    mac.update(body);
    parts.push(`v1,${mac.digest("base64")}`);
  }
  if (keys.ed25519.length > 0) {
    const content = Buffer.concat([
      Buffer.from(prefix, "utf8"),
      typeof body === "string" ? Buffer.from(body, "utf8") : body,
    ]);
    for (const key of keys.ed25519) parts.push(`v1a,${sign(null, content, key).toString("base64")}`);
  }
  return parts.join(" ");
}

/** A new ed25519 key pair: the private key as `whsk_` + base64 PKCS#8 (kept sealed), the public one as `whpk_` + base64 of its 32 bytes. */
export function newEd25519Pair(): { secretKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    secretKey: `whsk_${privateKey.export({ format: "der", type: "pkcs8" }).toString("base64")}`,
    publicKey: publicKeyText(publicKey),
  };
}

export function ed25519PrivateKey(secretKey: string): KeyObject {
  return createPrivateKey({
    key: Buffer.from(secretKey.replace(/^whsk_/, ""), "base64"),
    format: "der",
    type: "pkcs8",
  });
}

/** `whpk_` + the raw 32-byte public key in base64 (the JWK `x` bytes). */
function publicKeyText(key: KeyObject): string {
  const jwk = key.export({ format: "jwk" });
  return `whpk_${Buffer.from(jwk.x ?? "", "base64url").toString("base64")}`;
}

export function publicKeyOf(secretKey: string): string {
  return publicKeyText(createPublicKey(ed25519PrivateKey(secretKey)));
}
