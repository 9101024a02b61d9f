import { createHmac, timingSafeEqual } from "node:crypto";

export interface VerifyWebhookOptions {
  /** Largest allowed distance between the signed time and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time as a Date or epoch milliseconds (default: the clock). */
  now?: Date | number;
}

/**
 * Checks a `Service-Signature` header (`t=<unix seconds>,v1=<hex>[,v1=<hex>]`) against the raw request body:
 * each v1 is the lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with the UTF-8 bytes of the whole secret
 * (`whsec_` included). Any matching v1 passes (two during a secret rotation); comparison is constant-time; a
 * `t` more than the tolerance away from now fails. Pass the body exactly as received, before any JSON parsing.
 */
export function verifyWebhook(rawBody: string | Uint8Array, signatureHeader: string | null | undefined, secret: string, options: VerifyWebhookOptions = {}): boolean {
  if (typeof signatureHeader !== "string" || secret === "") return false;
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of signatureHeader.split(",")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t") {
      if (timestamp !== undefined) return false; // two timestamps: ambiguous
      timestamp = value;
    } else if (key === "v1" && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, "hex"));
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0) return false;
  const nowMs = options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now;
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > tolerance) return false;
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.`).update(typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody).digest();
  let ok = false;
  // every candidate is compared, so the time taken does not tell which one matched
  for (const sig of signatures) ok = timingSafeEqual(sig, expected) || ok;
  return ok;
}
