import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Decodes a 32-byte key given as 64 hex characters or base64/base64url. Undefined when it is not one. */
export function decodeKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  return key.length === 32 ? key : undefined;
}

/**
 * A 32-byte key for data at rest: the configured value (an environment variable, named in errors), else
 * (development) a key generated once into `${dataDir}/${fileName}` (mode 0600). Several processes on one data
 * directory share it.
 */
export function loadKeyFile(
  configured: string | undefined,
  dataDir: string,
  names: { variable: string; fileName: string },
): Buffer {
  if (configured !== undefined) {
    const key = decodeKey(configured);
    if (key === undefined) throw new Error(`${names.variable} must be 32 bytes (64 hex characters or base64)`);
    return key;
  }
  const file = join(dataDir, names.fileName);
  try {
    const key = decodeKey(readFileSync(file, "utf8"));
    if (key === undefined) throw new Error(`${file} does not hold a 32-byte key`);
    return key;
  } catch (err) {
    if ((err as { code?: unknown }).code !== "ENOENT") throw err;
  }
  mkdirSync(dirname(file), { recursive: true });
  try {
    // "wx": when two processes race, the second one fails here and reads the first one's key.
    writeFileSync(file, randomBytes(32).toString("hex") + "\n", { flag: "wx", mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as { code?: unknown }).code !== "EEXIST") throw err;
  }
  return decodeKey(readFileSync(file, "utf8"))!;
}
