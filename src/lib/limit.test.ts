import { describe, expect, it } from "vitest";
import { concurrencyLimit } from "./limit.ts";

describe("concurrencyLimit", () => {
  it("runs at most max works at once, the rest in the order they came; a failure frees its place", async () => {
    const limit = concurrencyLimit(2);
    const started: number[] = [];
    const finish: ((fail: boolean) => void)[] = [];
    const results = Array.from({ length: 5 }, (_, i) =>
      limit(
        () =>
          new Promise<number>((resolve, reject) => {
            started.push(i);
            finish[i] = (fail) => (fail ? reject(new Error(`work ${i}`)) : resolve(i));
          }),
      ).catch((err: Error) => err.message),
    );
    const settle = () => new Promise((r) => setImmediate(r));
    await settle();
    expect(started).toEqual([0, 1]);
    finish[1]!(true);
    await settle();
    expect(started).toEqual([0, 1, 2]);
    finish[0]!(false);
    finish[2]!(false);
    await settle();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    finish[3]!(false);
    finish[4]!(false);
    expect(await Promise.all(results)).toEqual([0, "work 1", 2, 3, 4]);
    // nothing left running: two new works start at once
    const again: number[] = [];
    const pending = [7, 8].map((n) => limit(async () => again.push(n)));
    await settle();
    expect(again).toEqual([7, 8]);
    await Promise.all(pending);
  });
});
