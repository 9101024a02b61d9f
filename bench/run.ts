// npm run bench: every benchmark, each printing ratios against a baseline measured in the same run; `growth` only when
// named (`npm run bench -- growth`: it fills a large database first). BENCH_SECONDS sets each load phase (default 8).
import { benchStatus } from "./status.bench.ts";
import { benchObservability } from "./observability.bench.ts";
import { benchConnectivity } from "./connectivity.bench.ts";
import { benchRateLimit } from "./ratelimit.bench.ts";
import { benchReservations } from "./reservations.bench.ts";
import { benchWebhooks } from "./webhooks.bench.ts";
import { benchCodec } from "./codec.bench.ts";
import { benchMobile } from "./mobile.bench.ts";
import { benchGrowth } from "./growth.bench.ts";
import { benchFrontDesk } from "./frontdesk.bench.ts";
import { benchOta } from "./ota.bench.ts";
import { benchPush } from "./push.bench.ts";
import { benchWorker } from "./worker.bench.ts";
import { benchReplica } from "./replica.bench.ts";
import { benchInvoices } from "./invoices.bench.ts";
import { benchTrail } from "./trail.bench.ts";
import { benchGuests } from "./guests.bench.ts";
import { benchGuestReporting } from "./guest-reporting.bench.ts";
import { benchCityLedger } from "./city-ledger.bench.ts";

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = {
  status: benchStatus,
  connectivity: benchConnectivity,
  ratelimit: benchRateLimit,
  reservations: benchReservations,
  trail: benchTrail,
  webhooks: benchWebhooks,
  push: benchPush,
  codec: benchCodec,
  mobile: benchMobile,
  ota: benchOta,
  observability: benchObservability,
  frontdesk: benchFrontDesk,
  "guest-reporting": benchGuestReporting,
  worker: benchWorker,
  replica: benchReplica,
  invoices: benchInvoices,
  guests: benchGuests,
  "city-ledger": benchCityLedger,
  growth: benchGrowth,
};
if (only !== undefined && !(only in benches)) {
  console.error(`no bench "${only}"; one of: ${Object.keys(benches).join(", ")}`);
  process.exit(2);
}
for (const [name, run] of Object.entries(benches)) {
  if (only === undefined ? name === "growth" : only !== name) continue;
  console.log(`\n=== ${name} ===`);
  await run();
}
