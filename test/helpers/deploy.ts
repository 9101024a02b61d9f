import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../../scripts/start-command.ts";

/**
 * The files of deploy/ as the tests use them: each is read as shipped and only its paths and ports are rendered
 * for the test (free ports, temporary directories, the checkout instead of /opt/hotelops), so what the tests run is
 * what an operator copies.
 */
const deployDir = join(repoRoot, "deploy");
export const deployPath = (...parts: string[]): string => join(deployDir, ...parts);

export type UnitRole = "api" | "worker";
const unitPath = (role: UnitRole): string => deployPath("systemd", `hotelops-${role}@.service`);

/** `Key=value` lines of a unit's [Service] section (a key may repeat), with `%i` replaced by `instance`. */
function serviceSection(role: UnitRole, instance: string): [string, string][] {
  const lines: [string, string][] = [];
  let section = "";
  for (const raw of readFileSync(unitPath(role), "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("[")) {
      section = line;
      continue;
    }
    if (section !== "[Service]") continue;
    const at = line.indexOf("=");
    lines.push([line.slice(0, at), line.slice(at + 1).replaceAll("%i", instance)]);
  }
  return lines;
}

/** What a unit starts: Node's arguments after the binary (the heap flags, dist/main.js) and its `Environment=`. */
export function unitCommand(role: UnitRole, instance = "1"): { args: string[]; env: Record<string, string> } {
  const section = serviceSection(role, instance);
  const exec = section.find(([k]) => k === "ExecStart")?.[1];
  if (exec === undefined) throw new Error(`${unitPath(role)}: no ExecStart`);
  const [binary, ...args] = exec.split(/\s+/);
  if (!binary!.endsWith("/node")) throw new Error(`${unitPath(role)}: ExecStart must run node, not ${binary}`);
  const env: Record<string, string> = {};
  for (const [k, v] of section)
    if (k === "Environment")
      for (const pair of v.split(/\s+/)) {
        const at = pair.indexOf("=");
        env[pair.slice(0, at)] = pair.slice(at + 1);
      }
  return { args, env };
}

/** The variables deploy/hotelops.env sets (commented-out lines are left out). */
export function envFileTemplate(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of readFileSync(deployPath("hotelops.env"), "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf("=");
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

/** A unit with the install paths (/opt/hotelops, /etc/hotelops/hotelops.env) pointed at `installDir` and `envFile`. */
export function renderUnit(role: UnitRole, installDir: string, envFile: string): string {
  return readFileSync(unitPath(role), "utf8")
    .replaceAll("/opt/hotelops", installDir)
    .replaceAll("/etc/hotelops/hotelops.env", envFile);
}

/** Sets `key = value` lines of an ini-style file (`key = value` with spaces), failing on a key the file lacks. */
function setIni(text: string, values: Record<string, string>, file: string): string {
  let out = text;
  for (const [key, value] of Object.entries(values)) {
    const re = new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} = .*$`, "m");
    if (!re.test(out)) throw new Error(`${file}: no "${key} = " line`);
    out = out.replace(re, `${key} = ${value}`);
  }
  return out;
}

/** deploy/pgbouncer/pgbouncer.ini with the test's ports and files (and any setting the test changes). */
export function renderPgBouncerIni(opts: {
  listenPort: number;
  serverPort: number;
  authFile: string;
  settings?: Record<string, string>;
}): string {
  const file = deployPath("pgbouncer", "pgbouncer.ini");
  return setIni(
    readFileSync(file, "utf8"),
    {
      hotelops: `host=127.0.0.1 port=${opts.serverPort} dbname=hotelops`,
      listen_port: String(opts.listenPort),
      // TCP only: the socket directory of the packaged server is not the test's to use
      unix_socket_dir: "",
      auth_file: opts.authFile,
      ...opts.settings,
    },
    file,
  );
}

/** deploy/haproxy/haproxy.cfg listening on `bind` with its `server` lines pointing at the given API addresses. */
export function renderHaproxyCfg(opts: { bind: string; servers: string[] }): string {
  const file = deployPath("haproxy", "haproxy.cfg");
  const text = readFileSync(file, "utf8");
  const servers = [...text.matchAll(/^ {4}server (\S+) \S+ (.*)$/gm)];
  if (servers.length !== opts.servers.length)
    throw new Error(`${file} has ${servers.length} server lines, the test starts ${opts.servers.length} APIs`);
  let i = 0;
  return text
    .replace(/^ {4}bind \S+/m, `    bind ${opts.bind}`)
    .replace(
      /^ {4}server (\S+) \S+ (.*)$/gm,
      (_, name: string, rest: string) => `    server ${name} ${opts.servers[i++]} ${rest}`,
    );
}
