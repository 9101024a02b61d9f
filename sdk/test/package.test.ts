// @hotelops/sdk as a user gets it: `npm pack`, installed from the tarball into an empty project, the README's
// examples type-checked there and run on Node 20 and 24 against the running server (partner, staff, webhook
// receiver), and the browser entry bundled by esbuild and run in headless chromium.
// No network: the SDK's own dependencies are packed from this repository's node_modules (the same pinned
// versions the registry serves) and installed with --offline.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { request } from "node:https";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.ts";
import { createStaffSession, createTestProperty } from "../../test/helpers/auth.ts";
import { launchChromium } from "../../test/helpers/prerequisites.ts";
import { killAllServices, startService, type ServiceProcess } from "../../test/helpers/service-process.ts";
import {
  createTestCa,
  startWebhookApp,
  testResolver,
  type TestCa,
  type WebhookApp,
} from "../../test/helpers/webhooks.ts";

const run = promisify(execFile);
const root = new URL("../..", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "hotelops-sdk-user-"));
const packs = join(scratch, "packs");
const project = join(scratch, "project");
let tarball = "";
let app: WebhookApp;
let ca: TestCa;
/** The service as `npm start` runs it on a fresh database: the demo hotel the partner and staff examples run against. */
let demo: ServiceProcess;
let demoDatabase = "";

/** The Node 20 that runs npm here (npm_node_execpath), else the system one; the tests run on Node 24. */
async function findNode20(): Promise<string> {
  for (const candidate of [process.env.npm_node_execpath, "/usr/bin/node", "/usr/local/bin/node"]) {
    if (candidate === undefined) continue;
    const version = await run(candidate, ["--version"]).then(
      (r) => r.stdout.trim(),
      () => "",
    );
    if (version.startsWith("v20.")) return candidate;
  }
  throw new Error("no Node 20 found (npm runs on it on this machine)");
}

/** The ```ts file=NAME blocks of sdk/README.md. */
function readmeExamples(): Map<string, string> {
  const readme = readFileSync(join(root, "sdk/README.md"), "utf8");
  return new Map([...readme.matchAll(/```ts file=(\S+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!]));
}

beforeAll(async () => {
  mkdirSync(packs);
  mkdirSync(join(project, "examples"), { recursive: true });
  const packed = await run("npm", ["pack", "--json", "--pack-destination", packs], { cwd: join(root, "sdk") });
  // stdout: the prepack build's log, then npm's JSON answer
  tarball = join(
    packs,
    (JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m))) as { filename: string }[])[0]!.filename,
  );
  const deps = ["@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-node", "@connectrpc/connect-web"];
  const depPacks = JSON.parse(
    (
      await run("npm", [
        "pack",
        "--json",
        "--ignore-scripts",
        "--pack-destination",
        packs,
        ...deps.map((d) => join(root, "node_modules", d)),
      ])
    ).stdout,
  ) as { name: string; filename: string }[];
  const overrides = Object.fromEntries(depPacks.map((p) => [p.name, `file:${join(packs, p.filename)}`]));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({
      name: "sdk-user",
      private: true,
      type: "module",
      dependencies: { "@hotelops/sdk": `file:${tarball}` },
      overrides,
    }),
  );
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: project });
  for (const [name, code] of readmeExamples()) writeFileSync(join(project, "examples", name), code);
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2022",
        lib: ["es2022", "dom"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        types: ["node"],
        typeRoots: [join(root, "node_modules/@types")],
        rootDir: "examples",
        outDir: "out",
      },
      include: ["examples"],
    }),
  );
  // a newcomer's `npm start`: the embedded PostgreSQL in a fresh data directory, seeded with the demo hotel
  const pgPort = await freePort();
  demoDatabase = `postgres://hotelops:hotelops@127.0.0.1:${pgPort}/hotelops`;
  chmodSync(scratch, 0o755);
  demo = await startService({ DATA_DIR: join(scratch, "demo-data"), EMBEDDED_PG_PORT: String(pgPort) });
  ca = createTestCa();
  app = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver() } });
}, 240_000);
afterAll(async () => {
  demo?.child.kill("SIGTERM");
  await demo?.exited;
  killAllServices();
  await app?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function runExample(
  node: string,
  name: string,
  env: Record<string, string>,
  baseUrl = app.baseUrl,
): Promise<string> {
  const { stdout } = await run(node, [join(project, "out", name.replace(/\.ts$/, ".js"))], {
    cwd: project,
    env: { ...process.env, HOTELOPS_URL: baseUrl, ...env },
    timeout: 30_000,
  });
  return stdout;
}

describe("the packed @hotelops/sdk", () => {
  it("is built ESM with .d.ts and its generated code inside; no TypeScript sources, no tests", async () => {
    const files = (await run("tar", ["-tzf", tarball])).stdout.split("\n").filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        "package/package.json",
        "package/README.md",
        "package/dist/index.js",
        "package/dist/index.d.ts",
        "package/dist/browser.js",
        "package/dist/browser.d.ts",
        "package/dist/gen/hotelops/reservation/v1/reservation_pb.js",
        "package/dist/gen/hotelops/reservation/v1/reservation_pb.d.ts",
        "package/dist/gen/google/api/annotations_pb.js",
      ]),
    );
    expect(files.filter((f) => /\.test\.|\/test\/|\/src\/|(?<!\.d)\.ts$/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(project, "node_modules/@hotelops/sdk/package.json"), "utf8")) as {
      private?: boolean;
      type: string;
      exports: Record<string, { types?: string; browser?: { types: string } }>;
    };
    expect(manifest.private).toBeUndefined();
    expect(manifest.type).toBe("module");
    expect(manifest.exports["."]?.types).toBe("./dist/index.d.ts");
    expect(manifest.exports["."]?.browser?.types).toBe("./dist/browser.d.ts");
  });

  it("type-checks the README examples in a project that installed the tarball (tsc, nodenext, strict)", async () => {
    expect([...readmeExamples().keys()].sort()).toEqual([
      "partner-grpc.ts",
      "partner.ts",
      "staff.ts",
      "webhook-receiver.ts",
    ]);
    const tsc = await run(join(root, "node_modules/.bin/tsc"), ["-p", project], { cwd: project }).catch(
      (e: { stdout: string }) => ({ stdout: e.stdout, failed: true }),
    );
    expect(tsc.stdout).toBe("");
  }, 180_000);

  it("partner examples (REST and gRPC with client credentials) run on Node 20 and 24 on the demo hotel: the booking is applied", async () => {
    // the internal client of the start banner, in the demo's own codes (DEMO-IST, DBL, BB)
    const banner = /client_id=(\S+) client_secret=(\S+)/.exec(demo.output());
    expect(banner, demo.output()).not.toBeNull();
    const env = { CLIENT_ID: banner![1]!, CLIENT_SECRET: banner![2]! };
    for (const node of [process.execPath, await findNode20()]) {
      expect(JSON.parse(await runExample(node, "partner.ts", env, demo.base)), node).toEqual({
        roomTypes: 4,
        queued: "QUEUED",
        sameEvent: true,
        outcome: "PROCESSED",
        reservations: true,
      });
      const lines = (await runExample(node, "partner-grpc.ts", env, demo.base)).trim().split("\n");
      expect(lines.map((l) => JSON.parse(l) as unknown).sort(), node).toEqual([
        { property: "DEMO-ANK", roomTypes: 4 },
        { property: "DEMO-IST", roomTypes: 4 },
      ]);
    }
  }, 90_000);

  it("the staff example runs with each demo login on Node 20 and 24: REST and Connect, a refused switch to DEMO-ANK (e-mail code) said, logged out", async () => {
    for (const node of [process.execPath, await findNode20()]) {
      // as written: the front desk login of the demo (one property)
      expect(JSON.parse(await runExample(node, "staff.ts", {}, demo.base)), node).toMatchObject({
        currency: "TRY",
        switched: false,
        properties: 1,
      });
      // the manager of both demo properties: DEMO-ANK asks for an e-mail code, so the switch is refused and said
      const manager = { STAFF_EMAIL: "manager@demo.test", STAFF_PASSWORD: "demo-pass-2026" };
      expect(JSON.parse(await runExample(node, "staff.ts", manager, demo.base)), node).toMatchObject({
        currency: "TRY",
        switched: false,
        properties: 2,
      });
    }
    // logout ended every session the examples opened
    const db = new pg.Client({ connectionString: demoDatabase });
    await db.connect();
    try {
      const open = await db.query("select count(*)::int as n from staff_sessions where revoked_at is null");
      expect(open.rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
  }, 90_000);

  it("the webhook receiver example verifies real deliveries with each scheme (Service-Signature, Standard Webhooks v1, ed25519 v1a) and says why a forged one fails", async () => {
    const property = await createTestProperty(app);
    const staff = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
    const auth = () => ({
      authorization: `Bearer ${staff.accessToken}`,
      "content-type": "application/json",
      "idempotency-key": crypto.randomUUID(),
    });
    const cases = [
      { scheme: "service", ed25519: false },
      { scheme: "standard", ed25519: false },
      { scheme: "standard", ed25519: true },
    ];
    for (const c of cases) {
      const port = await freePort();
      const created = (await (
        await fetch(`${app.baseUrl}/api/panel/v1/webhook-endpoints`, {
          method: "POST",
          headers: auth(),
          body: JSON.stringify({
            url: `https://receiver.test:${port}/hooks`,
            eventTypes: ["reservation.created"],
            ed25519: c.ed25519,
          }),
        })
      ).json()) as { endpoint: { id: string; publicKey?: string }; secret: string };
      // an ed25519 address is verified with its public key alone
      const key = c.ed25519 ? created.endpoint.publicKey! : created.secret;
      expect(key).toMatch(c.ed25519 ? /^whpk_/ : /^whsec_/);
      const receiver = spawn(process.execPath, [join(project, "out/webhook-receiver.js")], {
        cwd: project,
        env: {
          ...process.env,
          PORT: String(port),
          WEBHOOK_KEY: key,
          SCHEME: c.scheme,
          TLS_KEY_FILE: join(ca.dir, "srv.key"),
          TLS_CERT_FILE: join(ca.dir, "srv.crt"),
        },
      });
      try {
        const lines = linesOf(receiver);
        await lines.next("listening");
        const tested = await fetch(`${app.baseUrl}/api/panel/v1/webhook-endpoints/${created.endpoint.id}/test`, {
          method: "POST",
          headers: auth(),
          body: "{}",
        });
        expect(((await tested.json()) as { httpStatus: number }).httpStatus, JSON.stringify(c)).toBe(204);
        expect(await lines.next("verified")).toMatch(/^verified webhook\.test [0-9a-f-]{36}$/);
        const t = String(Math.floor(Date.now() / 1000));
        const forged = await postTo(port, ca, '{"type":"reservation.created"}', {
          "service-signature": `t=${t},v1=${"0".repeat(64)}`,
          "webhook-id": crypto.randomUUID(),
          "webhook-timestamp": t,
          "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")} v1a,${Buffer.alloc(64).toString("base64")}`,
        });
        expect(forged).toBe(400);
        expect(await lines.next("rejected")).toMatch(
          c.scheme === "service"
            ? /^rejected signature_mismatch: No v1 signature matches/
            : new RegExp(`^rejected signature_mismatch: No ${c.ed25519 ? "v1a" : "v1"} signature matches`),
        );
        expect(await postTo(port, ca, "{}", {})).toBe(400);
        expect(await lines.next("rejected")).toMatch(/^rejected missing_header/);
      } finally {
        receiver.kill();
      }
    }
  }, 60_000);

  it("bundles for browsers with esbuild (the browser entry, no Node modules) and calls the server from chromium over gRPC-Web", async () => {
    writeFileSync(
      join(project, "browser-app.js"),
      'import { createHotelOpsClient, StatusService } from "@hotelops/sdk";\nglobalThis.readStatus = async (baseUrl) => (await createHotelOpsClient(StatusService, { baseUrl, transport: "grpc-web" }).getStatus({})).status;\n',
    );
    const bundle = await build({
      entryPoints: [join(project, "browser-app.js")],
      absWorkingDir: project,
      bundle: true,
      write: false,
      metafile: true,
      format: "iife",
      platform: "browser",
      logLevel: "silent",
    });
    const inputs = Object.keys(bundle.metafile.inputs);
    expect(inputs).toContain("node_modules/@hotelops/sdk/dist/browser.js");
    expect(inputs.filter((i) => i.includes("connect-node") || i.startsWith("node:"))).toEqual([]);
    // a page on another loopback origin (the development CORS default allows it)
    const page: Server = createServer((req, res) => {
      if (req.url === "/app.js")
        res.writeHead(200, { "content-type": "text/javascript" }).end(bundle.outputFiles[0]!.text);
      else res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><script src="/app.js"></script>');
    });
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      await tab.goto(`http://localhost:${(page.address() as AddressInfo).port}/`);
      expect(
        await tab.evaluate(
          async (api) => (globalThis as unknown as { readStatus: (u: string) => Promise<string> }).readStatus(api),
          app.baseUrl,
        ),
      ).toBe("operational");
    } finally {
      await browser.close();
      page.close();
    }
  }, 60_000);
});

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Waits for stdout lines of a child, each `next(prefix)` returning the first unread line that starts with it. */
function linesOf(child: ChildProcess): { next(prefix: string): Promise<string> } {
  const seen: string[] = [];
  let wake: (() => void) | undefined;
  let buffer = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    seen.push(...parts);
    wake?.();
  });
  return {
    async next(prefix) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const i = seen.findIndex((l) => l.startsWith(prefix));
        if (i !== -1) return seen.splice(i, 1)[0]!;
        if (Date.now() > deadline) throw new Error(`no "${prefix}" line; got ${JSON.stringify(seen)}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
    },
  };
}

function postTo(port: number, ca: TestCa, body: string, signed: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json", ...signed };
    const req = request(
      {
        host: "127.0.0.1",
        port,
        servername: "receiver.test",
        path: "/hooks",
        method: "POST",
        ca: readFileSync(ca.caFile),
        headers,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
