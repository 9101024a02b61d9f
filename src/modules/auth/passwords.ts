import { availableParallelism } from "node:os";
import argon2 from "argon2";
import { concurrencyLimit } from "../../lib/limit.ts";

/**
 * argon2id with the OWASP minimum profile: m = 19 MiB, t = 2, p = 1. One verify takes about 26 ms on the
 * 2-core reference box (measured: m=19456/t=2 25.9 ms, m=32768/t=1 38.6 ms): slow enough to make a stolen
 * hash table expensive, fast enough for a login or a token request. The parameters live in each hash string,
 * so raising them later only affects new hashes.
 */
export const argon2Params = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashes and verifies running at once: one per core. Each holds its 19 MiB while it runs on a thread of libuv's pool
 * (4 by default); more at once than cores would only share the CPU, hold more memory and keep compression and DNS
 * lookups, which use the same pool, waiting. A flood of logins queues here.
 */
const inTurn = concurrencyLimit(availableParallelism());

/** Hashes a password or client secret. */
export function hashSecret(secret: string): Promise<string> {
  return inTurn(() => argon2.hash(secret, argon2Params));
}

/** Constant-work check; a malformed stored hash is a mismatch, not an error. */
export async function verifySecret(hash: string, secret: string): Promise<boolean> {
  try {
    return await inTurn(() => argon2.verify(hash, secret));
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/** Spends the time of one verify, so an unknown user or client answers as slowly as a wrong secret. */
export async function burnVerify(secret: string): Promise<false> {
  dummyHash ??= hashSecret("not-a-real-secret");
  await verifySecret(await dummyHash, secret);
  return false;
}
