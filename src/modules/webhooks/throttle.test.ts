import { describe, expect, it } from "vitest";
import { createThrottle } from "./throttle.ts";

describe("throttle", () => {
  it("spaces actual starts 1/perSecond apart and keeps at most `concurrency` in flight", async () => {
    const throttle = createThrottle();
    const starts: number[] = [];
    let inFlight = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        const a = await throttle.admit("ep", { perSecond: 50, concurrency: 3 }, 2_000);
        if ("deferMs" in a) throw new Error("deferred");
        starts.push(performance.now());
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 30));
        inFlight--;
        a.release();
      }),
    );
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(19);
    expect(most).toBeLessThanOrEqual(3);
  });

  it("hands back what would wait longer than allowed, and holds a receiver's pause", async () => {
    const throttle = createThrottle();
    const admitted = [];
    for (let i = 0; i < 3; i++) admitted.push(throttle.admit("ep", { perSecond: 1, concurrency: 10 }, 1_500));
    const fourth = await throttle.admit("ep", { perSecond: 1, concurrency: 10 }, 1_500);
    expect(fourth).toMatchObject({ deferMs: expect.any(Number) });
    expect((fourth as { deferMs: number }).deferMs).toBeGreaterThan(1_500);
    for (const a of await Promise.all(admitted)) if ("release" in a) a.release();
    throttle.pause("other", 5_000);
    const paused = await throttle.admit("other", { perSecond: 100, concurrency: 10 }, 1_000);
    expect((paused as { deferMs: number }).deferMs).toBeGreaterThan(4_000);
  });
});
