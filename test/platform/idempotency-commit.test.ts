import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { createIdempotencyRepository } from "../../src/modules/platform/index.ts";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";

// The outcome of an idempotent write is recorded by the statement that leaves with its transaction's COMMIT
// (Tx.queryLast): a claim lost meanwhile must fail that statement itself, or the writes would commit without it.
let t: TestDatabase;
beforeAll(async () => {
  t = await openTestDatabase({ role: "api" });
});
afterAll(async () => {
  await t?.close();
});

const outcome = { response: new Uint8Array([1, 2, 3]), headers: [] as [string, string][] };

function claimOf(now: Date) {
  return {
    caller: "user:test",
    key: randomUUID(),
    rpc: "test.Rpc",
    requestHash: "h",
    now,
    expiresAt: new Date(now.getTime() + 60_000),
    lockedUntil: new Date(now.getTime() + 10_000),
  };
}

describe("recording an outcome with the COMMIT", () => {
  it("commits the writes and the outcome together when the claim holds", async () => {
    const repo = createIdempotencyRepository(t.db.pool);
    const claim = claimOf(new Date());
    expect(await repo.claim(claim)).toBe(true);
    const code = `G-${randomUUID().slice(0, 8).toUpperCase()}`;
    await t.transact(async (tx) => {
      await tx.query("insert into hotel_groups (id, code, name) values (gen_random_uuid(), $1, 'x')", [code]);
      await repo.completeAll({ query: (text, params) => tx.queryLast(text, params) }, [{ claim, outcome }]);
    });
    expect((await repo.find(claim.caller, claim.key))?.state).toBe("done");
    expect(await t.db.query("select 1 from hotel_groups where code = $1", [code])).toHaveLength(1);
  });

  it("rolls the writes back and answers request_in_progress when the claim was taken over", async () => {
    const repo = createIdempotencyRepository(t.db.pool);
    const claim = claimOf(new Date());
    expect(await repo.claim(claim)).toBe(true);
    // a retry after the lease took the key: its claim has another created_at (the fencing token)
    const lost = { ...claim, now: new Date(claim.now.getTime() - 1) };
    const code = `G-${randomUUID().slice(0, 8).toUpperCase()}`;
    await expect(
      t.transact(async (tx) => {
        await tx.query("insert into hotel_groups (id, code, name) values (gen_random_uuid(), $1, 'x')", [code]);
        await repo.completeAll({ query: (text, params) => tx.queryLast(text, params) }, [{ claim: lost, outcome }]);
      }),
    ).rejects.toMatchObject({ code: "request_in_progress" });
    expect(await t.db.query("select 1 from hotel_groups where code = $1", [code])).toHaveLength(0);
    expect((await repo.find(claim.caller, claim.key))?.state).toBe("in_progress");
  });
});
