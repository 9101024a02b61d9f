import { Registry, collectDefaultMetrics } from "prom-client";
import { describe, expect, it } from "vitest";
import { collectProcessMetrics } from "./process-metrics.ts";

async function metricNames(registry: Registry): Promise<string[]> {
  return (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
}

describe("process metrics", () => {
  it("are prom-client's defaults without the per-GC histogram", async () => {
    const ours = new Registry();
    collectProcessMetrics(ours);
    const defaults = new Registry();
    collectDefaultMetrics({ register: defaults });
    const expected = (await metricNames(defaults)).filter((name) => !name.startsWith("nodejs_gc_"));
    expect(expected.length).toBeGreaterThan(10);
    expect(await metricNames(ours)).toEqual(expected);
    ours.clear();
    defaults.clear();
  });
});
