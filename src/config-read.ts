/**
 * Reading and checking the environment for config.ts: typed readers that collect every problem instead of stopping
 * at the first, and the sections with rules of their own (database URLs, tracing, guest reporting, the e-document
 * integrator, keys at rest, CORS).
 */
import { resolve } from "node:path";

export type Env = Record<string, string | undefined>;

/** Readers of `env` that push a problem (and answer the fallback) for a value out of range. */
export function createEnvReader(env: Env, problems: string[]) {
  return {
    int(name: string, fallback: number, min: number, max: number): number {
      const raw = env[name];
      if (raw === undefined || raw === "") return fallback;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min || n > max) {
        problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
        return fallback;
      }
      return n;
    },
    flag(name: string): boolean {
      const raw = env[name];
      if (raw === undefined || raw === "" || raw === "0" || raw === "false") return false;
      if (raw === "1" || raw === "true") return true;
      problems.push(`${name} must be 1/true or 0/false, got "${raw}"`);
      return false;
    },
    text: (name: string): string | undefined => (env[name] === "" ? undefined : env[name]),
    onOff(name: string, fallback: boolean): boolean {
      const raw = env[name];
      if (raw === undefined || raw === "") return fallback;
      if (raw === "on" || raw === "off") return raw === "on";
      problems.push(`${name} must be on or off, got "${raw}"`);
      return fallback;
    },
  };
}

type EnvReader = ReturnType<typeof createEnvReader>;

/**
 * A second database URL (DATABASE_DIRECT_URL, DATABASE_REPLICA_URL): a postgres:// URL beside DATABASE_URL, naming
 * one host.
 */
export function checkSecondaryDatabaseUrl(
  name: string,
  url: string | undefined,
  databaseUrl: string | undefined,
  problems: string[],
): void {
  if (url !== undefined && (databaseUrl === undefined || !/^postgres(ql)?:\/\//.test(url))) {
    problems.push(`${name} must be a postgres:// URL and needs DATABASE_URL`);
  } else if (url !== undefined) problems.push(...databaseUrlProblems(name, url));
}

/**
 * node-postgres connects to one host and parses the URL with `new URL()`: a multi-host URL (`postgres://a:5432,b:5432/db`,
 * libpq's failover syntax) or one URL cannot parse would pass a prefix check and crash the start later.
 */
export function databaseUrlProblems(name: string, url: string): string[] {
  const authority = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)/.exec(url)?.[1] ?? "";
  if (authority.includes(",")) {
    return [
      `${name} names more than one host (${authority}): the service connects to exactly one. For failover, put one address in front of the cluster (HAProxy or PgBouncer pointed at the current primary, or a virtual IP) and name that address here; target_session_attrs is not supported either`,
    ];
  }
  try {
    new URL(url);
  } catch {
    return [`${name} is not a valid URL (check that a password with @, /, ? or # in it is percent-encoded)`];
  }
  return [];
}

/** The samplers of the OpenTelemetry specification's `OTEL_TRACES_SAMPLER` that need no remote service. */
const tracesSamplers = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type TracesSampler = (typeof tracesSamplers)[number];

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the ratio, read by the traceidratio samplers only). */
export function tracesSamplerOf(read: EnvReader, problems: string[]): { name: TracesSampler; ratio: number } {
  const sampler = read.text("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  if (!(tracesSamplers as readonly string[]).includes(sampler))
    problems.push(`OTEL_TRACES_SAMPLER must be one of ${tracesSamplers.join(", ")}, got "${sampler}"`);
  const samplerArg = read.text("OTEL_TRACES_SAMPLER_ARG");
  const ratio = samplerArg === undefined ? 1 : Number(samplerArg);
  if (samplerArg !== undefined && !(sampler.endsWith("traceidratio") && ratio >= 0 && ratio <= 1))
    problems.push(
      sampler.endsWith("traceidratio")
        ? `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of traces kept), got "${samplerArg}"`
        : `OTEL_TRACES_SAMPLER_ARG is read only by the traceidratio samplers, not by ${sampler}`,
    );
  return { name: sampler as TracesSampler, ratio };
}

export interface GuestReportsConfig {
  /** none: notifications are queued and wait (listed as unreported) until a sender is configured. */
  sender: "none" | "https" | "file";
  endpoint: string | undefined;
  username: string | undefined;
  password: string | undefined;
  token: string | undefined;
  fileDir: string;
  timeoutMs: number;
  /** Attempts after the first, the first delay and the largest (doubling in between); then the report fails. */
  retryLimit: number;
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /** Full calendar years a report is kept after the year it was made, then deleted by the retention job. */
  retentionYears: number;
}

/** KBS_* and GUEST_REPORT_RETENTION_YEARS as read (guestReportsProblems checks them as a whole). */
export function guestReportsOf(read: EnvReader, env: Env): GuestReportsConfig {
  return {
    sender: (read.text("KBS_SENDER") ?? "none") as GuestReportsConfig["sender"],
    endpoint: read.text("KBS_ENDPOINT"),
    username: read.text("KBS_USERNAME"),
    password: read.text("KBS_PASSWORD"),
    token: read.text("KBS_TOKEN"),
    fileDir: resolve(env.KBS_FILE_DIR ?? resolve(env.DATA_DIR ?? ".data", "kbs")),
    // below the job's expiry (45 s): a hanging receiver fails the attempt, which is retried
    timeoutMs: read.int("KBS_TIMEOUT_MS", 10_000, 100, 30_000),
    retryLimit: read.int("KBS_RETRY_LIMIT", 20, 0, 1000),
    retryDelaySeconds: read.int("KBS_RETRY_DELAY_SECONDS", 30, 1, 3600),
    retryDelayMaxSeconds: read.int("KBS_RETRY_DELAY_MAX_SECONDS", 3600, 1, 86_400),
    retentionYears: read.int("GUEST_REPORT_RETENTION_YEARS", 5, 1, 100),
  };
}

export function guestReportsProblems(kbs: GuestReportsConfig, nodeEnv: string, problems: string[]): void {
  if (!["none", "https", "file"].includes(kbs.sender)) problems.push("KBS_SENDER must be none, https or file");
  if (kbs.sender === "https") {
    if (kbs.endpoint === undefined || !/^https?:\/\/[^/]/.test(kbs.endpoint) || !URL.canParse(kbs.endpoint))
      problems.push("KBS_ENDPOINT must be an http:// or https:// URL with KBS_SENDER=https");
    else if (nodeEnv === "production" && !kbs.endpoint.startsWith("https://"))
      problems.push("KBS_ENDPOINT must be https:// when NODE_ENV=production");
    if (kbs.token === undefined && kbs.username === undefined)
      problems.push("KBS_SENDER=https needs KBS_TOKEN or KBS_USERNAME and KBS_PASSWORD");
    if (kbs.token !== undefined && kbs.username !== undefined)
      problems.push("KBS_TOKEN and KBS_USERNAME are exclusive: set one");
  }
  if (kbs.retryDelayMaxSeconds < kbs.retryDelaySeconds)
    problems.push("KBS_RETRY_DELAY_MAX_SECONDS must be at least KBS_RETRY_DELAY_SECONDS");
}

export interface IntegratorConfig {
  url: string;
  token: string;
  /** One call to the integrator gets no longer than this (then it is a transport error, retried). */
  timeoutMs: number;
  /** Uploads tried after a transport error, the first delay and the largest (doubling in between). */
  retryLimit: number;
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /** How often the status of a SENT document is asked until it is ACCEPTED or REJECTED. */
  pollSeconds: number;
}

/** EDOCUMENT_INTEGRATOR_*: undefined without its URL. */
export function integratorOf(read: EnvReader, nodeEnv: string, problems: string[]): IntegratorConfig | undefined {
  const integratorUrl = read.text("EDOCUMENT_INTEGRATOR_URL");
  const integratorToken = read.text("EDOCUMENT_INTEGRATOR_TOKEN");
  if (integratorUrl === undefined) {
    if (integratorToken !== undefined) problems.push("EDOCUMENT_INTEGRATOR_TOKEN needs EDOCUMENT_INTEGRATOR_URL");
    return undefined;
  }
  if (!/^https?:\/\/[^/]/.test(integratorUrl) || !URL.canParse(integratorUrl))
    problems.push("EDOCUMENT_INTEGRATOR_URL must be an http:// or https:// URL");
  else if (nodeEnv === "production" && !integratorUrl.startsWith("https://"))
    problems.push("EDOCUMENT_INTEGRATOR_URL must be https:// when NODE_ENV=production");
  if (integratorToken === undefined)
    problems.push("EDOCUMENT_INTEGRATOR_TOKEN is required with EDOCUMENT_INTEGRATOR_URL");
  const integrator: IntegratorConfig = {
    url: integratorUrl,
    token: integratorToken ?? "",
    // below the job's expiry (45 s), so an upload that hangs fails and is retried rather than expired
    timeoutMs: read.int("EDOCUMENT_INTEGRATOR_TIMEOUT_MS", 10_000, 100, 30_000),
    retryLimit: read.int("EDOCUMENT_INTEGRATOR_RETRY_LIMIT", 20, 0, 1000),
    retryDelaySeconds: read.int("EDOCUMENT_INTEGRATOR_RETRY_DELAY_SECONDS", 10, 1, 3600),
    retryDelayMaxSeconds: read.int("EDOCUMENT_INTEGRATOR_RETRY_DELAY_MAX_SECONDS", 600, 1, 86_400),
    pollSeconds: read.int("EDOCUMENT_INTEGRATOR_POLL_SECONDS", 60, 1, 86_400),
  };
  if (integrator.retryDelayMaxSeconds < integrator.retryDelaySeconds)
    problems.push(
      "EDOCUMENT_INTEGRATOR_RETRY_DELAY_MAX_SECONDS must be at least EDOCUMENT_INTEGRATOR_RETRY_DELAY_SECONDS",
    );
  return integrator;
}

/** The keys sealing data at rest: each 32 bytes, as 64 hex characters or base64. */
export function keyProblems(keys: {
  webhookSecretKey: string | undefined;
  guestDataKey: string | undefined;
  guestDataPreviousKeys: string | undefined;
}): string[] {
  const problems: string[] = [];
  const secretKey = keys.webhookSecretKey?.trim();
  if (secretKey !== undefined && !/^[0-9a-f]{64}$/i.test(secretKey) && Buffer.from(secretKey, "base64").length !== 32) {
    problems.push("WEBHOOK_SECRET_KEY must be 32 bytes: 64 hex characters or base64");
  }
  for (const [name, value] of [
    ["GUEST_DATA_KEY", keys.guestDataKey],
    ...(keys.guestDataPreviousKeys ?? "").split(",").map((k) => ["GUEST_DATA_PREVIOUS_KEYS", k] as const),
  ] as const) {
    const key = value?.trim();
    if (key !== undefined && key !== "" && !/^[0-9a-f]{64}$/i.test(key) && Buffer.from(key, "base64").length !== 32)
      problems.push(`${name} must be 32 bytes: 64 hex characters or base64`);
  }
  return problems;
}

/** Unset: none in production, any loopback origin (a local front-end dev server) otherwise; "none": none. */
export function corsOriginsOf(raw: string | undefined, nodeEnv: string): string[] {
  if (raw === undefined) return nodeEnv === "production" ? [] : ["loopback"];
  if (raw.trim() === "none") return [];
  return raw
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "");
}
