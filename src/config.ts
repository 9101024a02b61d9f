import { getHeapStatistics } from "node:v8";
import { resolve } from "node:path";
import { parseTrustedProxies } from "./server/client-address.ts";
import { isOrigin } from "./server/cors.ts";
import {
  checkSecondaryDatabaseUrl,
  corsOriginsOf,
  createEnvReader,
  databaseUrlProblems,
  guestReportsOf,
  guestReportsProblems,
  integratorOf,
  keyProblems,
  tracesSamplerOf,
  type Env,
  type GuestReportsConfig,
  type IntegratorConfig,
  type TracesSampler,
} from "./config-read.ts";

export type { GuestReportsConfig, IntegratorConfig, TracesSampler } from "./config-read.ts";

export type Role = "api" | "worker" | "all";

/** The one typed configuration object, read from the environment and validated at start. */
export interface Config {
  port: number;
  host: string;
  role: Role;
  nodeEnv: string;
  /** Unset: an embedded PostgreSQL with its data in `${dataDir}/pg`. */
  databaseUrl: string | undefined;
  /** Connections of the process's one pool (pg-boss adds one LISTEN session): default 10, so 11 in all. */
  databasePoolMax: number;
  /**
   * Bookings whose partner messages one worker process applies at once (each booking's messages stay in order);
   * each uses up to two connections of the pool, so the effective value is at most (DATABASE_POOL_MAX - 2) / 2.
   * Default 4, or 1 behind PgBouncer (DATABASE_DIRECT_URL set).
   */
  workerConcurrency: number;
  /** A streaming replica for partner reads that may lag (availability, ARI); unset: every read on the primary. */
  databaseReplicaUrl: string | undefined;
  /** How far behind the primary the replica may be for those reads; beyond it they go to the primary. */
  replicaMaxLagMs: number;
  dataDir: string;
  /** Port of the embedded PostgreSQL (only used without DATABASE_URL). */
  embeddedPgPort: number;
  /** Unset: the dev outbox, one .eml file per message under `${dataDir}/mail`. */
  smtpUrl: string | undefined;
  seedDemo: boolean;
  tls: { certFile: string; keyFile: string } | undefined;
  logLevel: string;
  /** Largest JSON request body accepted on REST and Connect paths. */
  maxBodyBytes: number;
  /** Bytes of finished answers (and their renderings) kept per process for repeated reads; 0: none. */
  answerCacheBytes: number;
  /**
   * Unary Connect, gRPC and gRPC-Web calls served by src/server/unary.ts (on) or by connect-es's own handlers (off:
   * UNARY_FAST_PATH=off). The fast path uses connect-es internals pinned to one version (docs/adr).
   */
  unaryFastPath: boolean;
  /** How long shutdown waits for in-flight requests and jobs. */
  shutdownGraceMs: number;
  webhookAllowPrivateTargets: boolean;
  webhookExtraCaFile: string | undefined;
  /** 32-byte key (hex or base64) sealing webhook signing secrets at rest; unset: `${dataDir}/webhook-secret.key`. */
  webhookSecretKey: string | undefined;
  /** 32-byte key (hex or base64) sealing guest personal data at rest; unset: `${dataDir}/guest-data.key`. */
  guestDataKey: string | undefined;
  /** Comma-separated earlier guest data keys, still read (and searched) until a rotation re-sealed every row. */
  guestDataPreviousKeys: string | undefined;
  /** Full calendar years after the year of a guest's last stay before the retention job anonymises the profile. */
  guestRetentionYears: number;
  /** Guest reporting to the authority (KBS_*, GUEST_REPORT_RETENTION_YEARS; docs/operations/guest-reporting.md). */
  guestReports: GuestReportsConfig;
  /** Requests per minute of one staff session (clients use api_clients.rate_limit_per_minute). */
  rateLimitStaffPerMinute: number;
  /** Requests per minute of one client IP without authentication. */
  rateLimitAnonPerMinute: number;
  /** Requests per minute of login-like RPCs (rate_limit_class "auth"), per client IP and per account. */
  rateLimitAuthPerMinute: number;
  /** Seconds in which a just-rotated staff refresh token, presented again from the same device, gets the same answer. */
  refreshGraceSeconds: number;
  /** Successful token requests per partner client per minute (api_clients.token_requests_per_minute overrides). */
  rateLimitTokenPerMinute: number;
  /** Failed token endpoint authentications per minute, per client IP and per client id. */
  rateLimitTokenFailuresPerMinute: number;
  /** Proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client; empty: the socket peer is the client. */
  trustedProxies: string[];
  /** Connection hygiene of the one port (src/server/listen.ts). */
  connections: ConnectionLimits;
  /** EventService.StreamEvents (docs/internal/clients.md#the-event-stream). */
  eventStream: EventStreamLimits;
  /** Test hook: the idempotent write's transaction stays open this long after its outcome is recorded. */
  testCommitDelayMs: number;
  /**
   * A direct connection to the server when DATABASE_URL goes through a transaction-pooling PgBouncer: migrations
   * (a session advisory lock) and pg-boss (LISTEN, its own session state) use it, and pooled queries are sent
   * without statement names.
   */
  databaseDirectUrl: string | undefined;
  metrics: {
    enabled: boolean;
    /** Bearer token /metrics wants (unset: open). */
    token: string | undefined;
    /** Serve /metrics on a port of its own (any role) instead of the API port. */
    port: number | undefined;
  };
  /** OTLP/HTTP endpoint for traces (`OTEL_EXPORTER_OTLP_ENDPOINT`); unset: tracing off. */
  otlpEndpoint: string | undefined;
  /**
   * Which traces are recorded (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`, as the OpenTelemetry specification
   * names them): the sampler and, for the ratio samplers, the share of new traces kept (0 to 1).
   */
  tracesSampler: { name: TracesSampler; ratio: number };
  serviceName: string;
  /** Browser origins allowed by CORS: exact origins, "*" or "loopback"; empty: none (the production default). */
  corsOrigins: string[];
  /** The e-document integrator (EDOCUMENT_INTEGRATOR_*); unset: issued invoices wait QUEUED, nothing is sent. */
  edocumentIntegrator: IntegratorConfig | undefined;
}

export interface ConnectionLimits {
  /** Open connections per client address (socket peer); more are closed at once. */
  maxPerAddress: number;
  /** A new connection must show its protocol (HTTP/2 preface or an HTTP/1.1 request line) within this. */
  sniffTimeoutMs: number;
  /** Request headers must be complete within this (HTTP/1.1 headersTimeout; HTTP/2 a stream's headers). */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this, or the stream/connection is closed. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection (HTTP/1.1) or HTTP/2 session with no open stream is closed after this. */
  idleTimeoutMs: number;
  /** Concurrent streams per HTTP/2 session (SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxStreamsPerSession: number;
  /**
   * An answer the client does not take: bytes queued on an HTTP/1.1 connection or an HTTP/2 stream for this long
   * close the connection (HTTP/1.1) or reset the stream (HTTP/2), so a reader that stops costs memory for a bounded time.
   */
  writeStallTimeoutMs: number;
}

export interface EventStreamLimits {
  /** Open streams per user or client in one API process; one more is refused (RESOURCE_EXHAUSTED). */
  maxPerCaller: number;
  /** Events waiting for a subscriber that reads too slowly; one more ends its stream (RESOURCE_EXHAUSTED). */
  bufferEvents: number;
  /** A keep-alive message after this long without one. */
  keepAliveMs: number;
  /** A stream ends cleanly after this long (the client resumes by cursor and is authorised again). */
  maxDurationMs: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = createEnvReader(env, problems);
  const { int, flag, text, onOff } = read;

  const role = env.ROLE ?? "all";
  if (role !== "api" && role !== "worker" && role !== "all")
    problems.push(`ROLE must be api, worker or all, got "${role}"`);

  const databaseUrl = text("DATABASE_URL");
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push("DATABASE_URL must be a postgres:// or postgresql:// URL");
  } else if (databaseUrl !== undefined) problems.push(...databaseUrlProblems("DATABASE_URL", databaseUrl));
  const smtpUrl = text("SMTP_URL");
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl))
    problems.push("SMTP_URL must be an smtp:// or smtps:// URL");

  const databaseDirectUrl = text("DATABASE_DIRECT_URL");
  checkSecondaryDatabaseUrl("DATABASE_DIRECT_URL", databaseDirectUrl, databaseUrl, problems);
  const databaseReplicaUrl = text("DATABASE_REPLICA_URL");
  checkSecondaryDatabaseUrl("DATABASE_REPLICA_URL", databaseReplicaUrl, databaseUrl, problems);
  const otlpEndpoint = text("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (otlpEndpoint !== undefined && !/^https?:\/\//.test(otlpEndpoint))
    problems.push("OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL");
  const tracesSampler = tracesSamplerOf(read, problems);
  const metricsFlag = env.METRICS ?? "on";
  if (metricsFlag !== "on" && metricsFlag !== "off") problems.push(`METRICS must be on or off, got "${metricsFlag}"`);
  const metricsPort = text("METRICS_PORT");

  const certFile = text("TLS_CERT_FILE");
  const keyFile = text("TLS_KEY_FILE");
  if ((certFile === undefined) !== (keyFile === undefined))
    problems.push("TLS_CERT_FILE and TLS_KEY_FILE must be set together");

  const nodeEnv = env.NODE_ENV ?? "development";
  const webhookAllowPrivateTargets = flag("WEBHOOK_ALLOW_PRIVATE_TARGETS");
  if (webhookAllowPrivateTargets && nodeEnv === "production") {
    problems.push("WEBHOOK_ALLOW_PRIVATE_TARGETS is a test-only setting and is refused when NODE_ENV=production");
  }

  const config: Config = {
    port: int("PORT", 8080, 0, 65535),
    host: env.HOST ?? "0.0.0.0",
    role: role as Role,
    nodeEnv,
    databaseUrl,
    // at least 2: migrations hold an advisory lock on one connection while they run on another
    databasePoolMax: int("DATABASE_POOL_MAX", 10, 2, 1000),
    // behind PgBouncer (DATABASE_DIRECT_URL set) each drain's two connections come from PgBouncer's server pool,
    // sized by the operator: one booking at a time unless WORKER_CONCURRENCY says otherwise
    workerConcurrency: int("WORKER_CONCURRENCY", databaseDirectUrl === undefined ? 4 : 1, 1, 256),
    databaseReplicaUrl,
    replicaMaxLagMs: int("REPLICA_MAX_LAG_MS", 1_000, 100, 600_000),
    dataDir: resolve(env.DATA_DIR ?? ".data"),
    embeddedPgPort: int("EMBEDDED_PG_PORT", 5433, 1024, 65535),
    smtpUrl,
    seedDemo: flag("SEED_DEMO"),
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    logLevel: env.LOG_LEVEL ?? "info",
    maxBodyBytes: int("MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    answerCacheBytes: int("ANSWER_CACHE_BYTES", 32 * 1024 * 1024, 0, 4 * 1024 * 1024 * 1024),
    unaryFastPath: onOff("UNARY_FAST_PATH", true),
    shutdownGraceMs: int("SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    webhookAllowPrivateTargets,
    webhookExtraCaFile: text("WEBHOOK_EXTRA_CA_FILE"),
    webhookSecretKey: text("WEBHOOK_SECRET_KEY"),
    guestDataKey: text("GUEST_DATA_KEY"),
    guestDataPreviousKeys: text("GUEST_DATA_PREVIOUS_KEYS"),
    guestRetentionYears: int("GUEST_RETENTION_YEARS", 10, 1, 100),
    guestReports: guestReportsOf(read, env),
    rateLimitStaffPerMinute: int("RATE_LIMIT_STAFF_PER_MINUTE", 300, 1, 1_000_000_000),
    rateLimitAnonPerMinute: int("RATE_LIMIT_ANON_PER_MINUTE", 300, 1, 1_000_000_000),
    rateLimitAuthPerMinute: int("RATE_LIMIT_AUTH_PER_MINUTE", 10, 1, 1_000_000_000),
    refreshGraceSeconds: int("REFRESH_GRACE_SECONDS", 30, 0, 300),
    rateLimitTokenPerMinute: int("RATE_LIMIT_TOKEN_PER_MINUTE", 30, 1, 1_000_000_000),
    rateLimitTokenFailuresPerMinute: int("RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE", 20, 1, 1_000_000_000),
    corsOrigins: corsOriginsOf(text("CORS_ORIGINS"), nodeEnv),
    trustedProxies: (env.TRUSTED_PROXIES ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter((p) => p !== ""),
    connections: {
      maxPerAddress: int("MAX_CONNECTIONS_PER_ADDRESS", 256, 1, 1_000_000),
      sniffTimeoutMs: int("CONNECTION_SNIFF_TIMEOUT_MS", 5_000, 100, 600_000),
      headersTimeoutMs: int("HEADERS_TIMEOUT_MS", 10_000, 100, 600_000),
      requestTimeoutMs: int("REQUEST_TIMEOUT_MS", 60_000, 100, 3_600_000),
      idleTimeoutMs: int("IDLE_TIMEOUT_MS", 65_000, 100, 3_600_000),
      maxStreamsPerSession: int("H2_MAX_CONCURRENT_STREAMS", 100, 1, 10_000),
      writeStallTimeoutMs: int("WRITE_STALL_TIMEOUT_MS", 30_000, 100, 3_600_000),
    },
    eventStream: {
      maxPerCaller: int("EVENT_STREAM_MAX_PER_CALLER", 8, 1, 10_000),
      bufferEvents: int("EVENT_STREAM_BUFFER_EVENTS", 1_000, 1, 1_000_000),
      keepAliveMs: int("EVENT_STREAM_KEEPALIVE_MS", 15_000, 100, 600_000),
      maxDurationMs: int("EVENT_STREAM_MAX_SECONDS", 900, 1, 86_400) * 1000,
    },
    testCommitDelayMs: int("TEST_COMMIT_DELAY_MS", 0, 0, 600_000),
    databaseDirectUrl,
    metrics: {
      enabled: metricsFlag !== "off",
      token: text("METRICS_TOKEN"),
      port: metricsPort === undefined ? undefined : int("METRICS_PORT", 0, 0, 65535),
    },
    otlpEndpoint,
    tracesSampler,
    serviceName: text("OTEL_SERVICE_NAME") ?? `hotelops-${role}`,
    edocumentIntegrator: undefined,
  };
  config.edocumentIntegrator = integratorOf(read, nodeEnv, problems);
  guestReportsProblems(config.guestReports, nodeEnv, problems);
  if (config.testCommitDelayMs > 0 && nodeEnv === "production")
    problems.push("TEST_COMMIT_DELAY_MS is a test-only setting and is refused when NODE_ENV=production");
  if (config.corsOrigins.some((o) => o !== "*" && o !== "loopback" && !isOrigin(o))) {
    problems.push(
      'CORS_ORIGINS must be "none", "*", "loopback" or a comma-separated list of origins such as https://app.example.com (scheme, host, port; no path)',
    );
  }
  // the cache lives in V8's heap, which npm start limits (--max-old-space-size): past a quarter of the limit it
  // would take the room that large answers are built in
  const heapLimit = getHeapStatistics().heap_size_limit;
  if (config.answerCacheBytes > heapLimit / 4)
    problems.push(
      `ANSWER_CACHE_BYTES must be at most a quarter of this process's heap limit (${Math.floor(heapLimit / 4)} bytes); start node with a larger --max-old-space-size for a larger cache`,
    );
  if (parseTrustedProxies(config.trustedProxies) === undefined)
    problems.push("TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges");
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  problems.push(...keyProblems(config));
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
  return config;
}
