import { createRequire } from "node:module";
import type { Registry } from "prom-client";

/**
 * prom-client's default process metrics (CPU, memory, heap spaces, handles, file descriptors, event-loop lag, Node's
 * version) without its GC histogram. That one subscribes a PerformanceObserver to every garbage collection, and on a
 * busy server the per-GC callbacks were measured as the whole cost of metrics (a status call at 0.79x of metrics
 * off with it, 1.03-1.09x without). `collectDefaultMetrics` offers no way to leave one collector out, so each is
 * registered from its own module, as prom-client itself does.
 */
const collectors = [
  "processCpuTotal",
  "processStartTime",
  "osMemoryHeap",
  "processOpenFileDescriptors",
  "processMaxFileDescriptors",
  "eventLoopLag",
  "processResources",
  "processHandles",
  "processRequests",
  "heapSizeAndUsed",
  "heapSpacesSizeAndUsed",
  "version",
] as const;

type Collector = (registry: Registry, config: { eventLoopMonitoringPrecision: number }) => void;

export function collectProcessMetrics(registry: Registry, eventLoopMonitoringPrecision = 20): void {
  const require = createRequire(import.meta.url);
  for (const name of collectors) {
    const collect = require(`prom-client/lib/metrics/${name}`) as Collector;
    collect(registry, { eventLoopMonitoringPrecision });
  }
}
