// npm run bench: every benchmark, each printing ratios against a baseline measured in the same run.
// BENCH_SECONDS sets the duration of each load phase (default 8).
import { benchStatus } from "./status.bench.ts";
import { benchObservability } from "./observability.bench.ts";
import { benchConnectivity } from "./connectivity.bench.ts";
import { benchRateLimit } from "./ratelimit.bench.ts";
import { benchReservations } from "./reservations.bench.ts";
import { benchWebhooks } from "./webhooks.bench.ts";
import { benchCodec } from "./codec.bench.ts";
import { benchMobile } from "./mobile.bench.ts";
import { benchGrowth } from "./growth.bench.ts";

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = {
  status: benchStatus,
  connectivity: benchConnectivity,
  ratelimit: benchRateLimit,
  reservations: benchReservations,
  webhooks: benchWebhooks,
  codec: benchCodec,
  mobile: benchMobile,
  observability: benchObservability,
  growth: benchGrowth,
};
for (const [name, run] of Object.entries(benches)) {
  if (only !== undefined && only !== name) continue;
  console.log(`\n=== ${name} ===`);
  await run();
}
