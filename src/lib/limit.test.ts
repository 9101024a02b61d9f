import { describe, expect, it } from "vitest";
import { concurrencyLimit, keyedSerializer } from "./limit.ts";

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

describe("keyedSerializer", () => {
  it("runs one key's works in order and one at a time, other keys alongside; a caller joins a work not yet started", async () => {
    const run = keyedSerializer(10);
    const log: string[] = [];
    const finish = new Map<string, () => void>();
    const work = (name: string) => () =>
      new Promise<void>((resolve) => {
        log.push(`start ${name}`);
        finish.set(name, () => {
          log.push(`end ${name}`);
          resolve();
        });
      });
    const settle = () => new Promise((r) => setTimeout(r, 5));
    const a1 = run("a", work("a1"));
    const b1 = run("b", work("b1"));
    await settle();
    const a2 = run("a", work("a2"));
    // a2 has not started: a3 joins it (its own work never runs)
    const a3 = run("a", work("a3"));
    await settle();
    expect(log).toEqual(["start a1", "start b1"]);
    finish.get("b1")!();
    finish.get("a1")!();
    await settle();
    expect(log).toEqual(["start a1", "start b1", "end b1", "end a1", "start a2"]);
    // a2 has started: a4 runs after it
    const a4 = run("a", work("a4"));
    finish.get("a2")!();
    await settle();
    finish.get("a4")!();
    await Promise.all([a1, a2, a3, a4, b1]);
    expect(log).toEqual(["start a1", "start b1", "end b1", "end a1", "start a2", "end a2", "start a4", "end a4"]);
  });

  it("a failed work fails its callers only; the key's next work still runs", async () => {
    const run = keyedSerializer(1);
    let started = false;
    const failed = run("a", () => ((started = true), Promise.reject(new Error("lock timeout"))));
    await new Promise((r) => setTimeout(r, 5));
    expect(started).toBe(true);
    const next = run("a", async () => undefined);
    await expect(failed).rejects.toThrow("lock timeout");
    await expect(next).resolves.toBeUndefined();
  });
});
