import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import type pg from "pg";
import type { Clock } from "../../lib/clock.ts";
import { pooledTransaction } from "../../db/pooled-transaction.ts";

export const SIGNING_ALG = "ES256";

interface SigningKey {
  kid: string;
  key: CryptoKey;
}

export interface KeyStore {
  /** The newest non-retired key (created on first use when the table is empty). */
  signingKey(): Promise<SigningKey>;
  /** The public key for a `kid`, or undefined when unknown or retired. */
  verificationKey(kid: string): Promise<CryptoKey | undefined>;
  /** Adds a new key; it signs from now on (after other processes refresh, within `refreshMs`). */
  rotate(): Promise<string>;
  /** Stops accepting tokens signed with `kid` (in other processes within `refreshMs`). */
  retire(kid: string): Promise<void>;
}

interface Row {
  kid: string;
  private_jwk: JWK;
  public_jwk: JWK;
  created_at: Date;
}

/**
 * JWT signing keys kept in `signing_keys`: sign with the newest non-retired key, verify with any non-retired
 * one, so a rotation is "add a key, retire the old one 15 minutes later". Keys are cached in memory and
 * re-read every `refreshMs`, or at once (at most every 5 s) when a token names an unknown kid.
 * The private JWK sits in the database as plain JSON: database access is already full access.
 */
export function createKeyStore(pool: pg.Pool, clock: Clock, refreshMs = 5 * 60_000): KeyStore {
  let loadedAt = -Infinity;
  let lastMissReload = -Infinity;
  let loading: Promise<void> | undefined;
  let signing: SigningKey | undefined;
  let verifying = new Map<string, CryptoKey>();

  async function load(): Promise<void> {
    const { rows } = await pool.query<Row>(
      "select kid, private_jwk, public_jwk, created_at from signing_keys where retired_at is null order by seq desc",
    );
    const next = new Map<string, CryptoKey>();
    for (const row of rows) next.set(row.kid, (await importJWK(row.public_jwk, SIGNING_ALG)) as CryptoKey);
    const newest = rows[0];
    signing =
      newest === undefined
        ? undefined
        : { kid: newest.kid, key: (await importJWK(newest.private_jwk, SIGNING_ALG)) as CryptoKey };
    verifying = next;
    loadedAt = performance.now();
  }

  function reload(): Promise<void> {
    loading ??= load().finally(() => (loading = undefined));
    return loading;
  }

  async function insertKey(onlyIfNone: boolean): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = `k${clock.now().toISOString().slice(0, 10).replaceAll("-", "")}-${crypto.randomUUID().slice(0, 8)}`;
    return pooledTransaction(pool, async (_, client) => {
      // Two processes starting on an empty table must not both create a key (harmless, but untidy).
      await client.query("select pg_advisory_xact_lock(726018)");
      if (onlyIfNone) {
        const { rowCount } = await client.query("select 1 from signing_keys where retired_at is null limit 1");
        if ((rowCount ?? 0) > 0) return "";
      }
      await client.query(
        "insert into signing_keys (kid, alg, private_jwk, public_jwk, created_at) values ($1, $2, $3, $4, $5)",
        [
          kid,
          SIGNING_ALG,
          { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG },
          { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: "sig" },
          clock.now(),
        ],
      );
      return kid;
    });
  }

  const stale = (): boolean => performance.now() - loadedAt > refreshMs;

  return {
    async signingKey() {
      if (signing === undefined || stale()) await reload();
      if (signing === undefined) {
        await insertKey(true);
        await reload();
      }
      if (signing === undefined) throw new Error("no signing key available");
      return signing;
    },
    async verificationKey(kid) {
      if (stale()) await reload();
      let key = verifying.get(kid);
      if (key === undefined && performance.now() - lastMissReload > 5_000) {
        lastMissReload = performance.now();
        await reload();
        key = verifying.get(kid);
      }
      return key;
    },
    async rotate() {
      const kid = await insertKey(false);
      await reload();
      return kid;
    },
    async retire(kid) {
      await pool.query("update signing_keys set retired_at = $2 where kid = $1 and retired_at is null", [
        kid,
        clock.now(),
      ]);
      await reload();
    },
  };
}
