import { createHash } from "node:crypto";
import { toBinary } from "@bufbuild/protobuf";
import {
  createContextKey,
  type ContextValues,
  type Interceptor,
  type StreamRequest,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { AppError } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { scoped } from "../../server/calls.ts";
import { callInfoKey, keyedKey } from "../../server/context.ts";
import { principalKey, type Principal } from "../auth/index.ts";
import { createHeldTransaction } from "../../db/held-transaction.ts";
import type { Claim, IdempotencyRepository } from "./idempotency.repository.ts";
import { encodeResponse, replay, storable, storedHeaders } from "./idempotency-outcome.ts";
import type { Count, Hit } from "./rate-limit.repository.ts";
import { policyOf } from "./policy.rpc.ts";

export interface IdempotencyOptions {
  repository: IdempotencyRepository;
  clock: Clock;
  logger: Logger;
  /** How long a key is kept (default 24 h, the contract's minimum). */
  ttlMs?: number;
  /** How long a request waits for a concurrent one with the same key before 409 request_in_progress (default 5 s). */
  waitMs?: number;
  /**
   * After this long an in-progress claim may be taken over (default 10 s). Short is safe: a request that writes
   * holds its key's row locked in its transaction (a takeover waits for its commit, then replays it), and one
   * taken over before it wrote is fenced out at its first transaction and commits nothing.
   */
  leaseMs?: number;
  /** Test hook (crash tests): how long the RPC's transaction stays open after its outcome is recorded. */
  commitDelayMs?: number;
}

const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** The claim this module already tried in the rate limiter's count of the call (countWith), for the interceptor. */
const countedClaimKey = createContextKey<{ claim: Claim; claimed: boolean } | undefined>(undefined, {
  description: "hotelops idempotency claim taken with the rate-limit count",
});

export interface Idempotency {
  interceptor: Interceptor;
  /**
   * For the rate limiter (RateLimitOptions.countWith): a keyed unary write is counted by its claim's statement
   * (count and claim in one round trip, the claim only within the limit); undefined for any other call.
   */
  countWith(req: UnaryRequest | StreamRequest, count: Count): Promise<Hit> | undefined;
}

/**
 * Idempotency-Key on every unary write (docs/conventions.md, "Idempotency"): the first outcome of (caller, key) is stored
 * and replayed for the same request; a different request under the key is 409 idempotency_conflict; a concurrent
 * duplicate waits for the first or gets 409 request_in_progress. The key is claimed in a statement of its own (or
 * in the one that counts the call for the rate limiter, countWith) before the RPC runs, so two requests never both
 * execute. The flow, in one page: docs/contributors/idempotency.md.
 */
export function createIdempotency(opts: IdempotencyOptions): Idempotency {
  const ttlMs = opts.ttlMs ?? 24 * 60 * 60 * 1000;
  const waitMs = opts.waitMs ?? 5000;
  const leaseMs = opts.leaseMs ?? 10_000;
  const repo = opts.repository;

  function claimOf(req: UnaryRequest, key: string, caller: string, rpc: string): Claim {
    const requestHash = hashRequest(rpc, req.contextValues.get(principalKey), toBinary(req.method.input, req.message));
    const now = opts.clock.now();
    return {
      caller,
      key,
      rpc,
      requestHash,
      now,
      expiresAt: new Date(now.getTime() + ttlMs),
      lockedUntil: new Date(now.getTime() + leaseMs),
    };
  }

  function countWith(req: UnaryRequest | StreamRequest, count: Count): Promise<Hit> | undefined {
    if (req.stream) return undefined;
    const policy = policyOf(req.method);
    const key = req.header.get("idempotency-key");
    if (!policy.write || key === null || !VALID_KEY.test(key)) return undefined;
    const caller = callerOf(req.contextValues.get(principalKey), req.contextValues, policy.idempotencyKeyRequired);
    if (caller === undefined) return undefined;
    const claim = claimOf(req, key, caller, policy.rpc);
    return repo.claimCounted(claim, count).then(({ hit, claimed }) => {
      req.contextValues.set(countedClaimKey, { claim, claimed });
      return hit;
    });
  }

  const unscoped: Interceptor = (next) => async (req) => {
    if (req.stream) return next(req);
    const policy = policyOf(req.method);
    const key = req.header.get("idempotency-key");
    if (key === null) {
      if (policy.idempotencyKeyRequired)
        throw keyError("is required", "This request requires an Idempotency-Key header.");
      return next(req);
    }
    if (!VALID_KEY.test(key))
      throw keyError(
        "must be 1-255 visible ASCII characters",
        "Idempotency-Key must be 1-255 visible ASCII characters.",
      );
    // checked but not stored: an answer that carries secrets (tokens, personal data) is never replayed
    if (!policy.write) return next(req);
    const principal = req.contextValues.get(principalKey);
    const caller = callerOf(principal, req.contextValues, policy.idempotencyKeyRequired);
    if (caller === undefined) return next(req);

    const taken = req.contextValues.get(countedClaimKey);
    let claim =
      taken !== undefined && taken.claim.caller === caller && taken.claim.key === key
        ? taken.claim
        : claimOf(req, key, caller, policy.rpc);
    let claimed = taken?.claim === claim ? taken.claimed : await repo.claim(claim);
    const deadline = performance.now() + waitMs;
    for (let delay = 20; !claimed; delay = Math.min(delay * 2, 200)) {
      const found = await repo.find(caller, key);
      if (found !== undefined) {
        if (found.requestHash !== claim.requestHash) {
          throw new AppError(
            "idempotency_conflict",
            "This Idempotency-Key was already used with a different request.",
            { details: [{ field: "Idempotency-Key", reason: "was used with a different request" }] },
          );
        }
        if (found.state === "done") return replay(req, found.response, found.responseHeaders, found.error);
        if (performance.now() + delay > deadline) {
          throw new AppError(
            "request_in_progress",
            "A request with this Idempotency-Key is still in progress; retry later.",
            { retryAfterSeconds: 1 },
          );
        }
        await new Promise((r) => setTimeout(r, delay));
      } // else released (5xx) or purged between the two statements: claim again at once
      const now = opts.clock.now();
      claim = {
        ...claim,
        now,
        expiresAt: new Date(now.getTime() + ttlMs),
        lockedUntil: new Date(now.getTime() + leaseMs),
      };
      claimed = await repo.claim(claim);
    }

    // This request holds the key. Its outcome is recorded in the RPC's own transaction, held open until the
    // response is known, or with the RPC's deferred write in its writer's batch (held-transaction.ts): after a
    // crash a retry replays it or finds nothing done. The RPC gets the handle in its context values (`keyedOf`)
    // and opens its transaction with it: `transact(work, keyed)`.
    const held = createHeldTransaction({
      onOpen: (tx) => repo.lock(tx, claim),
      ...(opts.commitDelayMs ? { commitDelayMs: opts.commitDelayMs } : {}),
    });
    let res: UnaryResponse | undefined;
    let failure: unknown;
    try {
      req.contextValues.set(keyedKey, held);
      res = (await next(req)) as UnaryResponse;
    } catch (err) {
      failure = err ?? new Error("rejected without a reason");
    }
    const outcome =
      res !== undefined
        ? { response: encodeResponse(req.method.output, res.message), headers: storedHeaders(res.header) }
        : storable(failure);
    if (held.holding) {
      try {
        if (outcome === undefined) await held.rollback();
        else await held.commit({ item: { claim, outcome }, recordAll: repo.completeAll });
      } catch (err) {
        // Nothing committed: give the key back so the retry runs on a state where nothing happened.
        await bookkeep(() => repo.release(claim), "release");
        throw err;
      }
    } else {
      // The RPC changed nothing through a transaction (it failed before, or had nothing to write).
      await bookkeep(
        () => (outcome === undefined ? repo.release(claim) : repo.complete(claim, outcome)),
        outcome === undefined ? "release" : "complete",
      );
    }
    if (res === undefined) throw failure;
    return res;
  };
  // unary RPCs that document the header (false for streaming methods)
  const interceptor = scoped((method) => policyOf(method).idempotencyKeyChecked, unscoped);
  return { interceptor, countWith };

  /** The outcome is already decided; a failed bookkeeping write is logged, never turned into the caller's error. */
  async function bookkeep(write: () => Promise<void>, what: string): Promise<void> {
    try {
      await write();
    } catch (err) {
      opts.logger.error({ err }, `idempotency ${what} failed`);
    }
  }
}

function keyError(reason: string, message: string): AppError {
  return new AppError("invalid_argument", message, { details: [{ field: "Idempotency-Key", reason }] });
}

/**
 * Whose key space a key lives in: the principal's subject. Anonymous callers are skipped unless the RPC
 * requires a key, then their client address is the best subject there is.
 */
function callerOf(principal: Principal | undefined, values: ContextValues, required: boolean): string | undefined {
  if (principal !== undefined)
    return principal.kind === "staff" ? `user:${principal.userId}` : `client:${principal.clientId}`;
  if (!required) return undefined;
  return `ip:${values.get(callInfoKey)?.remoteAddress ?? ""}`;
}

/** The RPC, the staff member's active property (it scopes requests without a property in the body) and the request bytes. */
function hashRequest(rpc: string, principal: Principal | undefined, body: Uint8Array): string {
  const scope = principal?.kind === "staff" ? principal.activePropertyId : "";
  return createHash("sha256").update(rpc).update("\0").update(scope).update("\0").update(body).digest("base64url");
}
