import { createHmac, timingSafeEqual } from "node:crypto";

export interface VerifyWebhookOptions {
  /** Largest allowed distance between the signed time and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time as a Date or epoch milliseconds (default: the clock). */
  now?: Date | number;
}

/** Why a webhook failed verification (`WebhookVerificationError.reason`). */
export type WebhookFailure =
  "missing_header" | "malformed_header" | "timestamp_out_of_tolerance" | "signature_mismatch" | "missing_secret";

/** The request is not a genuine webhook of this endpoint: answer 400 and do not act on the body. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookFailure;
  constructor(reason: WebhookFailure, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/**
 * Checks a `Service-Signature` header (`t=<unix seconds>,v1=<hex>[,v1=<hex>]`) against the raw request body:
 * each v1 is the lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with the UTF-8 bytes of the whole secret
 * (`whsec_` included). Any matching v1 passes (two during a secret rotation); comparison is constant-time; a
 * `t` more than the tolerance away from now fails. Pass the body exactly as received, before any JSON parsing,
 * and the header as Node gives it (`req.headers["service-signature"]`: a string, a list or undefined).
 * Returns the signed time; throws WebhookVerificationError saying why otherwise.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | readonly string[] | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): { timestamp: number } {
  if (secret === "")
    throw new WebhookVerificationError("missing_secret", "No signing secret given (the endpoint's whsec_... secret).");
  const header =
    typeof signatureHeader === "string"
      ? signatureHeader
      : Array.isArray(signatureHeader)
        ? signatureHeader.join(",")
        : "";
  if (header.trim() === "")
    throw new WebhookVerificationError("missing_header", "The request has no Service-Signature header.");
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t") {
      if (timestamp !== undefined && timestamp !== value)
        throw new WebhookVerificationError(
          "malformed_header",
          "The Service-Signature header carries two different timestamps.",
        );
      timestamp = value;
    } else if (key === "v1" && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, "hex"));
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError("malformed_header", "The Service-Signature header has no t=<unix seconds>.");
  if (signatures.length === 0)
    throw new WebhookVerificationError(
      "malformed_header",
      "The Service-Signature header has no v1=<64 lowercase hex digits>.",
    );
  const nowMs =
    options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now;
  const tolerance = options.toleranceSeconds ?? 300;
  const skew = Math.round(nowMs / 1000 - Number(timestamp));
  if (Math.abs(skew) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      `Signed ${Math.abs(skew)} s ${skew >= 0 ? "ago" : "in the future"}, more than the ${tolerance} s allowed (a replay, or this machine's clock is off).`,
    );
  }
  const expected = createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(`${timestamp}.`)
    .update(typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody)
    .digest();
  let ok = false;
  // every candidate is compared, so the time taken does not tell which one matched
  for (const sig of signatures) ok = timingSafeEqual(sig, expected) || ok;
  if (!ok)
    throw new WebhookVerificationError(
      "signature_mismatch",
      "No v1 signature matches this body and secret (was the body re-serialized before verifying, or is it another endpoint's secret?).",
    );
  return { timestamp: Number(timestamp) };
}
