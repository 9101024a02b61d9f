import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Config } from "../config.ts";
import type { Database } from "../db/index.ts";
import type { Transact } from "../db/transaction.ts";
import type { Boss } from "../jobs/boss.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { XmlEndpoint } from "../gateway/xml.ts";

/** What every module is built from (wired by hand in app.ts). */
export interface Deps {
  config: Config;
  db: Database;
  boss: Boss;
  transact: Transact;
  clock: Clock;
  logger: Logger;
  /** Undefined with METRICS=off. */
  metrics?: Metrics | undefined;
}

/** The shape app.ts composes: RPC services and workers (the interceptor chain is written out in app.ts). */
export interface Module {
  name: string;
  /** RPC services this module serves (for reflection and health). */
  services?: DescService[];
  registerRpc?(router: ConnectRouter): void;
  /** XML endpoints outside the google.api.http routes, each served as one of the module's RPCs (gateway/xml.ts). */
  xmlEndpoints?: XmlEndpoint[];
  /** Registers pg-boss workers and schedules; called once the boss is up (ROLE=worker|all run them). */
  startWorkers?(): Promise<void>;
  /** Ends the module's long-lived calls (server streams); called first at shutdown, so none holds the grace period. */
  closeStreams?(): void;
  /** Releases what the module holds outside the database (worker threads, timers); called once at shutdown. */
  stop?(): Promise<void>;
}
