import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from "node:crypto";
import { decodeKey, loadKeyFile } from "../../lib/key-file.ts";

/**
 * Guest personal data at rest. Each 32-byte master key yields (HKDF-SHA256) an AES-256-GCM key, an HMAC-SHA256
 * search key and a public key id. Sealed values name their key id, so a rotation (a new current key, the old
 * one kept as previous until every row is re-sealed) never makes a row unreadable, and a search hashes the
 * value under every configured key.
 */
export interface GuestVault {
  /** The id of the current key (what `seal` uses). */
  readonly keyId: string;
  seal(plain: string, rowId: string): string;
  open(sealed: string, rowId: string): string;
  /** The key id a sealed value was made with. */
  keyIdOf(sealed: string): string;
  /** The search hash of a normalised value under the current key. */
  hash(normalised: string): Buffer;
  /** The search hashes under every key (current first): what a search looks for during a rotation. */
  hashes(normalised: string): Buffer[];
}

interface DerivedKey {
  id: string;
  enc: KeyObject;
  mac: KeyObject;
}

function derive(master: Buffer): DerivedKey {
  const part = (info: string) => Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), info, 32));
  return {
    id: part("hotelops guest data key id").toString("hex").slice(0, 16),
    enc: createSecretKey(part("hotelops guest data encryption")),
    mac: createSecretKey(part("hotelops guest data search")),
  };
}

export function createGuestVault(current: Buffer, previous: readonly Buffer[] = []): GuestVault {
  const keys = [current, ...previous].map(derive);
  const head = keys[0]!;
  const byId = new Map(keys.map((k) => [k.id, k]));
  const mac = (key: DerivedKey, value: string) => createHmac("sha256", key.mac).update(value, "utf8").digest();
  return {
    keyId: head.id,
    seal(plain, rowId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", head.enc, iv);
      cipher.setAAD(Buffer.from(rowId));
      const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return [
        "g1",
        head.id,
        iv.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
        ct.toString("base64url"),
      ].join(".");
    },
    open(sealed, rowId) {
      const [version, id, iv, tag, ct] = sealed.split(".");
      if (version !== "g1" || id === undefined || iv === undefined || tag === undefined || ct === undefined)
        throw new Error("unknown sealed guest data format");
      const key = byId.get(id);
      if (key === undefined) throw new Error(`guest data sealed under key ${id}, which is not configured`);
      const decipher = createDecipheriv("aes-256-gcm", key.enc, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(rowId));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
    },
    keyIdOf: (sealed) => sealed.split(".")[1] ?? "",
    hash: (value) => mac(head, value),
    hashes: (value) => keys.map((k) => mac(k, value)),
  };
}

/**
 * The vault of the configuration: GUEST_DATA_KEY (else a key generated once into `${dataDir}/guest-data.key`)
 * and GUEST_DATA_PREVIOUS_KEYS (comma-separated keys still read during a rotation).
 */
export function loadGuestVault(config: {
  guestDataKey: string | undefined;
  guestDataPreviousKeys: string | undefined;
  dataDir: string;
}): GuestVault {
  const current = loadKeyFile(config.guestDataKey, config.dataDir, {
    variable: "GUEST_DATA_KEY",
    fileName: "guest-data.key",
  });
  const previous = (config.guestDataPreviousKeys ?? "")
    .split(",")
    .filter((k) => k.trim() !== "")
    .map((k) => {
      const key = decodeKey(k);
      if (key === undefined) throw new Error("GUEST_DATA_PREVIOUS_KEYS must list 32-byte keys (hex or base64)");
      return key;
    });
  return createGuestVault(current, previous);
}
