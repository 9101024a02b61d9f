// npm run test:ha: a failover of the primary under load, on this machine, from Debian's packages (etcd-server,
// patroni, postgresql, haproxy) with the files of deploy/ha/ as they are (placeholders filled in). Starts etcd, two
// Patroni nodes (synchronous replication), HAProxy routing to the leader, one API and one worker process of the
// service (`npm start`'s command), runs a mixed load (mobile reservations, partner messages NEW/MODIFIED/CANCELLED,
// the webhook deliveries they cause), kills the primary node hard (SIGKILL to Patroni and PostgreSQL), lets the
// standby take over and checks: no acknowledged write lost, none twice, every queued message and webhook processed,
// API and worker back without a restart, and how long requests failed (target < 15 s). Not part of `npm test`
// (about 2-3 minutes). Runbook: docs/operations/high-availability.md.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { newId } from "../src/lib/ids.ts";
import { setProviderMapping } from "../src/modules/connectivity/index.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../test/helpers/auth.ts";
import { createTestCa } from "../test/helpers/https-receiver.ts";
import { clusterUser, freePort, serverBinDir } from "./pg-cluster.ts";
import { repoRoot, startArguments } from "./start-command.ts";

const SUPERUSER = "hotelops";
const PASSWORD = "hotelops-ha-test";
const LOAD_SECONDS_BEFORE = 8;
const LOAD_SECONDS_AFTER = 20;

const started = Date.now();
const log = (line: string): void =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(probe: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(200);
  }
}

const user = process.getuid?.() === 0 ? clusterUser() : undefined;
const dir = mkdtempSync(join(tmpdir(), "hotelops-ha-"));
if (user !== undefined) chownSync(dir, user.uid, user.gid);
chmodSync(dir, 0o700);
const children: ChildProcess[] = [];
/** A process of its own group (so the whole of it can be killed), as the cluster user for etcd and Patroni. */
function start(name: string, cmd: string, args: string[], env: Record<string, string> = {}, asUser = true) {
  const [file, argv] = asUser && user !== undefined ? ["runuser", ["-u", user.name, "--", cmd, ...args]] : [cmd, args];
  const child = spawn(file, argv, {
    // the service runs from the checkout (`npm start`'s dist/main.js), the rest in the test's directory
    cwd: asUser ? dir : repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  const keep = (c: Buffer) => (out = (out + c.toString()).slice(-20_000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  children.push(child);
  return { child, name, output: () => out };
}
function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // gone
  }
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/@([A-Z_]+)@/g, (_, k: string) => {
    const v = values[k];
    if (v === undefined) throw new Error(`no value for @${k}@`);
    return v;
  });
}

async function main(): Promise<void> {
  const etcdClient = await freePort();
  const etcdPeer = await freePort();
  const etcd = start(
    "etcd",
    "etcd",
    [
      "--name=ha-test",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=ha-test=http://127.0.0.1:${etcdPeer}`,
    ],
    {},
  );
  await until(
    async () => (await fetch(`http://127.0.0.1:${etcdClient}/health`)).ok,
    30_000,
    `etcd up (${etcd.output()})`,
  );
  log("etcd up");

  const template = readFileSync(join(repoRoot, "deploy/ha/patroni.yml"), "utf8");
  const nodes = await Promise.all(
    ["node1", "node2"].map(async (name) => ({ name, rest: await freePort(), pg: await freePort() })),
  );
  const patroni = new Map<string, ReturnType<typeof start>>();
  const startNode = (node: (typeof nodes)[number]) => {
    const file = join(dir, `${node.name}.yml`);
    writeFileSync(
      file,
      fill(template, {
        NODE_NAME: node.name,
        NODE_HOST: "127.0.0.1",
        REST_PORT: String(node.rest),
        PG_PORT: String(node.pg),
        ETCD_HOSTS: `127.0.0.1:${etcdClient}`,
        DATA_DIR: join(dir, node.name),
        BIN_DIR: serverBinDir(),
        SOCKET_DIR: dir,
        SUPERUSER,
        SUPERUSER_PASSWORD: PASSWORD,
        REPLICATION_USER: "replicator",
        REPLICATION_PASSWORD: PASSWORD,
      }),
    );
    if (user !== undefined) chownSync(file, user.uid, user.gid);
    patroni.set(node.name, start(node.name, "patroni", [file]));
  };
  const role = async (node: (typeof nodes)[number], path: "primary" | "replica") =>
    (await fetch(`http://127.0.0.1:${node.rest}/${path}`, { signal: AbortSignal.timeout(2_000) })).status === 200;
  startNode(nodes[0]!);
  await until(() => role(nodes[0]!, "primary"), 90_000, `node1 primary (${patroni.get("node1")!.output()})`);
  log("node1 is the primary");
  startNode(nodes[1]!);
  await until(
    async () => {
      const cluster = (await (await fetch(`http://127.0.0.1:${nodes[0]!.rest}/cluster`)).json()) as {
        members: { name: string; role: string; state: string }[];
      };
      return cluster.members.some(
        (m) => m.name === "node2" && m.role === "sync_standby" && ["running", "streaming"].includes(m.state),
      );
    },
    120_000,
    `node2 a synchronous standby (${patroni.get("node2")!.output().slice(-2000)})`,
  );
  log("node2 streams as the synchronous standby");

  const proxyPort = await freePort();
  const haproxyFile = join(dir, "haproxy.cfg");
  writeFileSync(
    haproxyFile,
    fill(readFileSync(join(repoRoot, "deploy/ha/haproxy.cfg"), "utf8"), {
      LISTEN: `127.0.0.1:${proxyPort}`,
      SERVERS: nodes.map((n) => `    server ${n.name} 127.0.0.1:${n.pg} maxconn 300 check port ${n.rest}`).join("\n"),
    }),
  );
  const haproxy = start("haproxy", "haproxy", ["-db", "-f", haproxyFile], {}, false);
  const url = (db = "hotelops") => `postgres://${SUPERUSER}:${PASSWORD}@127.0.0.1:${proxyPort}/${db}`;
  await until(
    async () => {
      const c = new pg.Client({ connectionString: url("postgres") });
      await c.connect();
      await c.query("create database hotelops");
      await c.end();
      return true;
    },
    30_000,
    `database created through HAProxy (${haproxy.output()})`,
  );
  log(`HAProxy on ${proxyPort} leads to the primary`);

  // webhook receiver (HTTPS, the test CA)
  const ca = createTestCa();
  const received = new Map<string, number>();
  const receiver = https.createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    req.resume();
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      received.set(id, (received.get(id) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const receiverPort = (receiver.address() as { port: number }).port;

  const dataDir = mkdtempSync(join(tmpdir(), "hotelops-ha-data-"));
  const env = {
    DATABASE_URL: url(),
    DATA_DIR: dataDir,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
    RATE_LIMIT_STAFF_PER_MINUTE: "100000",
    RATE_LIMIT_PARTNER_PER_MINUTE: "100000",
  };
  const admin = await createApp(loadConfig({ ...env, ROLE: "api", PORT: "0", HOST: "127.0.0.1" }), {
    logger: pino({ level: "silent" }),
  });
  const property = await createTestProperty(admin, { code: "HA-1", businessDate: "2027-01-01" });
  const inventory = admin.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  for (let n = 0; n < 20; n++) await inventory.createRoom(property.id, { number: `${100 + n}`, roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-01-01",
    to: "2028-12-31",
    amountMinor: 25000n,
  });
  for (const [kind, code, externalCode] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const)
    await setProviderMapping(admin.deps.db.pool, {
      propertyCode: property.code,
      provider: "acme",
      kind,
      code,
      externalCode,
    });
  const partner = await createTestClient(admin, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
  const manager = await createStaffSession(admin, { propertyCode: property.code, role: "manager" });
  const hook = await admin.deps.db.pool.query("select 1"); // the admin app's pool is up
  void hook;
  const created = await fetch(`http://127.0.0.1:${admin.port}/api/panel/v1/webhook-endpoints`, {
    method: "POST",
    headers: { authorization: `Bearer ${manager.accessToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      url: `https://localhost:${receiverPort}/hook`,
      eventTypes: ["reservation.created", "reservation.cancelled"],
      description: "HA test",
    }),
  });
  if (created.status !== 201) throw new Error(`webhook endpoint: ${created.status} ${await created.text()}`);
  await admin.close();
  const sql = new pg.Pool({ connectionString: url(), max: 2 });
  sql.on("error", () => undefined);

  const service = (role: string) => {
    const args = startArguments();
    return start(
      `ROLE=${role}`,
      process.execPath,
      args,
      { ...env, ROLE: role, HOST: "127.0.0.1", LOG_LEVEL: "warn" },
      false,
    );
  };
  const apiPort = await freePort();
  const api = start(
    "api",
    process.execPath,
    startArguments(),
    { ...env, ROLE: "api", HOST: "127.0.0.1", PORT: String(apiPort), LOG_LEVEL: "warn" },
    false,
  );
  const worker = service("worker");
  const base = `http://127.0.0.1:${apiPort}`;
  await until(async () => (await fetch(`${base}/readyz`)).status === 200, 60_000, `API ready (${api.output()})`);
  await until(async () => worker.output().includes("Worker started"), 60_000, `worker started (${worker.output()})`);
  log("API and worker up");

  // The load: each request repeated with its Idempotency-Key until acknowledged, as a client does.
  const failures: number[] = [];
  let stop = false;
  const acknowledgedBookings: { key: string; code: string }[] = [];
  const acknowledgedMessages: string[] = [];
  async function acknowledged(path: string, token: string, key: string, body: unknown, want: number): Promise<string> {
    for (;;) {
      const at = Date.now();
      try {
        const res = await fetch(`${base}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(5_000),
        });
        const text = await res.text();
        if (res.status === want) return text;
        if (res.status < 500) throw new Error(`${path}: ${res.status} ${text}`);
      } catch (err) {
        if (err instanceof Error && /: 4\d\d /.test(err.message)) throw err;
      }
      failures.push(at);
      await sleep(250);
    }
  }
  let night = 0;
  const DAY = 86_400_000;
  const dateOf = (n: number) => new Date(Date.UTC(2027, 0, 1) + n * DAY).toISOString().slice(0, 10);
  const mobileLoop = async () => {
    while (!stop) {
      const n = night++ % 700;
      const key = newId();
      const text = await acknowledged(
        "/api/mobile/v1/reservations",
        manager.accessToken,
        key,
        {
          holderName: `HA ${key}`,
          arrivalDate: dateOf(n),
          departureDate: dateOf(n + 1),
          roomTypeId: dbl.id,
          ratePlanId: bar.id,
          adults: 2,
          totalMinor: 25000,
          currency: "TRY",
        },
        201,
      );
      acknowledgedBookings.push({ key, code: (JSON.parse(text) as { code: string }).code });
    }
  };
  let references = 0;
  const partnerLoop = async () => {
    while (!stop) {
      const reference = `HA-${references++}`;
      const n = night++ % 700;
      for (const [eventType, holder] of [
        ["NEW", "Guest 0"],
        ["MODIFIED", "Guest 1"],
        ["CANCELLED", "Guest 1"],
      ] as const) {
        const text = await acknowledged(
          `/api/v1/properties/${property.code}/reservation-events`,
          partner.accessToken,
          `${reference}-${eventType}`,
          {
            eventType,
            externalReference: reference,
            channel: "Booking.com",
            arrivalDate: dateOf(n),
            departureDate: dateOf(n + 1),
            currency: "TRY",
            holder: { name: holder },
            rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 25000 }],
            totalMinor: 25000,
          },
          202,
        );
        acknowledgedMessages.push((JSON.parse(text) as { eventId: string }).eventId);
      }
    }
  };
  const loops = [mobileLoop(), mobileLoop(), partnerLoop(), partnerLoop()];
  // a load loop that throws (an unexpected 4xx) ends the run with its error
  const loopsDone = Promise.all(loops);
  loopsDone.catch(() => (stop = true));
  await sleep(LOAD_SECONDS_BEFORE * 1000);

  // kill the primary node hard: Patroni and its PostgreSQL, SIGKILL
  const leader = nodes[0]!;
  const postmaster = Number(readFileSync(join(dir, leader.name, "postmaster.pid"), "utf8").split("\n")[0]);
  const killedAt = Date.now();
  killGroup(patroni.get(leader.name)!.child);
  process.kill(postmaster, "SIGKILL");
  log(`killed node1 (Patroni and PostgreSQL ${postmaster}) with SIGKILL under load`);
  await until(() => role(nodes[1]!, "primary"), 60_000, "node2 promoted");
  const promotedAfter = (Date.now() - killedAt) / 1000;
  log(`node2 is the primary ${promotedAfter.toFixed(1)} s after the kill`);
  await sleep(LOAD_SECONDS_AFTER * 1000);
  stop = true;
  await loopsDone;
  log(
    `load stopped: ${acknowledgedBookings.length} reservations and ${acknowledgedMessages.length} partner messages acknowledged`,
  );

  // checks
  const problems: string[] = [];
  const failedAfterKill = failures.filter((t) => t >= killedAt);
  const window =
    failedAfterKill.length === 0 ? 0 : (Math.max(...failedAfterKill) - Math.min(...failedAfterKill)) / 1000;
  const firstOk = failedAfterKill.length === 0 ? 0 : (Math.max(...failedAfterKill) - killedAt) / 1000;
  const bookings = (
    await sql.query<{ code: string; n: number }>(
      "select code, count(*)::int as n from reservations where holder_name = any($1) group by code",
      [acknowledgedBookings.map((b) => `HA ${b.key}`)],
    )
  ).rows;
  const byCode = new Map(bookings.map((b) => [b.code, b.n]));
  const lost = acknowledgedBookings.filter((b) => !byCode.has(b.code));
  const twice = (
    await sql.query<{ n: number }>(
      "select count(*)::int as n from (select holder_name from reservations where holder_name like 'HA %' group by 1 having count(*) > 1) x",
    )
  ).rows[0]!.n;
  if (lost.length > 0) problems.push(`${lost.length} acknowledged reservations lost`);
  if (twice > 0) problems.push(`${twice} reservations stored twice`);
  const queuedDone = await until(
    async () => {
      const r = (
        await sql.query<{ total: number; queued: number; processed: number; ids: number }>(
          "select count(*)::int as total, count(*) filter (where status = 'QUEUED')::int as queued, count(*) filter (where status = 'PROCESSED')::int as processed, count(distinct id)::int as ids from partner_messages where id = any($1)",
          [acknowledgedMessages],
        )
      ).rows[0]!;
      return r.queued === 0 ? r : undefined;
    },
    120_000,
    "every partner message applied",
  ).catch((err: Error) => {
    problems.push(err.message);
    return undefined;
  });
  if (queuedDone !== undefined && queuedDone.total !== acknowledgedMessages.length)
    problems.push(`${acknowledgedMessages.length - queuedDone.total} acknowledged partner messages lost`);
  if (queuedDone !== undefined && queuedDone.processed !== queuedDone.total)
    problems.push(`${queuedDone.total - queuedDone.processed} partner messages not PROCESSED`);
  const duplicateChannel = (
    await sql.query<{ n: number }>(
      "select count(*)::int as n from (select external_reference from reservations where external_reference like 'HA-%' group by 1 having count(*) > 1) x",
    )
  ).rows[0]!.n;
  if (duplicateChannel > 0) problems.push(`${duplicateChannel} channel bookings created twice`);
  const webhooks = await until(
    async () => {
      const r = (
        await sql.query<{ total: number; done: number }>(
          "select count(*)::int as total, count(*) filter (where status = 'succeeded')::int as done from webhook_deliveries",
        )
      ).rows[0]!;
      return r.total > 0 && r.done === r.total ? r : undefined;
    },
    120_000,
    "every webhook delivery succeeded",
  ).catch((err: Error) => {
    problems.push(err.message);
    return undefined;
  });
  const ready = await fetch(`${base}/readyz`).then((r) => r.status);
  if (ready !== 200) problems.push(`API /readyz answers ${ready}`);
  if (api.child.exitCode !== null || worker.child.exitCode !== null)
    problems.push(`a service process exited (api ${api.child.exitCode}, worker ${worker.child.exitCode})`);

  console.log("\n=== HA failover result ===");
  console.log(`standby promoted ${promotedAfter.toFixed(1)} s after the primary was killed`);
  console.log(
    `requests failed (5xx or no answer, retried with their Idempotency-Key) for ${window.toFixed(1)} s; the last failure ${firstOk.toFixed(1)} s after the kill (target < 15 s): ${failedAfterKill.length} failed attempts`,
  );
  console.log(
    `acknowledged: ${acknowledgedBookings.length} mobile reservations (${lost.length} lost, ${twice} twice), ${acknowledgedMessages.length} partner messages (${queuedDone?.processed ?? "?"} PROCESSED)`,
  );
  console.log(
    `webhook deliveries: ${webhooks?.done ?? "?"} of ${webhooks?.total ?? "?"} succeeded; ${received.size} distinct deliveries received`,
  );
  console.log(`API and worker processes: still the same processes (pids ${api.child.pid}, ${worker.child.pid})`);
  if (firstOk >= 15) problems.push(`requests failed until ${firstOk.toFixed(1)} s after the kill (target < 15 s)`);
  await sql.end();
  receiver.close();
  for (const p of [api, worker]) killGroup(p.child, "SIGTERM");
  await sleep(1000);
  for (const c of children) killGroup(c);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(ca.dir, { recursive: true, force: true });
  if (problems.length > 0) {
    console.log(`FAILED:\n- ${problems.join("\n- ")}`);
    process.exitCode = 1;
  } else console.log("PASSED");
}

function cleanUp(): void {
  for (const c of children) killGroup(c);
  // Patroni's PostgreSQL runs in a session of its own: stop what is left of the nodes' servers
  for (const node of ["node1", "node2"]) {
    try {
      const pid = Number(readFileSync(join(dir, node, "postmaster.pid"), "utf8").split("\n")[0]);
      if (pid > 0) process.kill(pid, "SIGKILL");
    } catch {
      // not running
    }
  }
  spawnSync("sleep", ["0.5"]);
  spawnSync("rm", ["-rf", dir]);
}
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    cleanUp();
    process.exit(1);
  });
try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  cleanUp();
  process.exit();
}
