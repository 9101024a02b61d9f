import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/** The answer a rotation gave, kept so a retry of that rotation within the grace window gets it again. */
export interface GraceAnswer {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds at which the access token expires. */
  accessExpiresAtMs: number;
}

/**
 * Sealed with AES-256-GCM under a key derived from the spent refresh token itself: only a caller who presents
 * that token can open it, and the database alone (which stores token hashes) cannot.
 */
const keyOf = (presented: string): Buffer =>
  createHash("sha256").update("hotelops refresh grace\0").update(presented).digest();

export function sealGraceAnswer(presented: string, answer: GraceAnswer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(presented), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(answer), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function openGraceAnswer(presented: string, sealed: Buffer): GraceAnswer | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(presented), sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(12, 28));
    const text = Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString("utf8");
    return JSON.parse(text) as GraceAnswer;
  } catch {
    return undefined;
  }
}
