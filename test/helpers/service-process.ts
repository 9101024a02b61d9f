import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { freePort } from "../../scripts/pg-cluster.ts";
import { envFileTemplate, unitCommand } from "./deploy.ts";

export interface ServiceProcess {
  child: ChildProcess;
  role: string;
  /** http://127.0.0.1:<port> (ROLE=worker: no port). */
  base: string;
  /** Where /metrics is served when started with the environment file (the unit's METRICS_PORT). */
  metricsBase?: string;
  output(): string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

export interface StartOptions {
  /**
   * Start from deploy/hotelops.env too (NODE_ENV=production, PgBouncer and direct URLs, HOST ...): its values
   * under `env`, except its CHANGE-ME placeholders, which only `env` fills; /metrics then on the unit's
   * METRICS_PORT (a free port here, `metricsBase`).
   */
  envFile?: boolean;
}

/**
 * The service as its systemd unit runs it (deploy/systemd/hotelops-{api,worker}@.service: the ExecStart arguments,
 * which are `npm start`'s, and its Environment=; ROLE=all runs the API unit), on free ports; resolves once /readyz
 * answers 200 (or the worker says so).
 */
export async function startService(env: Record<string, string>, opts: StartOptions = {}): Promise<ServiceProcess> {
  const role = env.ROLE ?? "all";
  const unit = unitCommand(role === "worker" ? "worker" : "api");
  const port = env.PORT ?? String(await freePort());
  const fromFile = opts.envFile
    ? Object.fromEntries(Object.entries(envFileTemplate()).filter(([, v]) => !v.includes("CHANGE-ME")))
    : {};
  const metricsPort = opts.envFile ? String(await freePort()) : undefined;
  // the unit's command and environment, in the role asked for (the api unit says ROLE=api; "all" when none is asked)
  const unitEnv: Record<string, string> = { ...unit.env, PORT: port, ROLE: role };
  if (metricsPort === undefined) delete unitEnv.METRICS_PORT;
  else unitEnv.METRICS_PORT = metricsPort;
  let out = "";
  const child = spawn(process.execPath, unit.args, {
    cwd: join(import.meta.dirname, "../.."),
    env: { ...process.env, LOG_LEVEL: "warn", HOST: "127.0.0.1", ...fromFile, ...unitEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const service: ServiceProcess = {
    child,
    role,
    base: `http://127.0.0.1:${port}`,
    ...(metricsPort === undefined ? {} : { metricsBase: `http://127.0.0.1:${env.METRICS_PORT ?? metricsPort}` }),
    output: () => out,
    exited,
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ROLE=${role} exited with ${child.exitCode}: ${out}`);
    if (
      role === "worker"
        ? out.includes("Worker started")
        : await fetch(`${service.base}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          )
    )
      return service;
    if (Date.now() > deadline) throw new Error(`ROLE=${role} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** kill -9 of one service; resolves once it exited. */
export function kill9(s: ServiceProcess): Promise<unknown> {
  s.child.kill("SIGKILL");
  return s.exited;
}

/** SIGKILLs whatever a failed test left running. */
export function killAllServices(): void {
  for (const c of running) c.kill("SIGKILL");
}

export async function until<T>(probe: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
