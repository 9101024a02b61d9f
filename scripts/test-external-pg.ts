// npm run test:external-pg [-- vitest args]: starts a throw-away PostgreSQL cluster from the system's server
// package (scripts/pg-cluster.ts), runs the test suite against it through DATABASE_URL, and removes the cluster.
import { spawn } from "node:child_process";
import { startPgCluster } from "./pg-cluster.ts";

const cluster = await startPgCluster();
console.log(`throw-away PostgreSQL on 127.0.0.1:${cluster.port} in ${cluster.dir}`);
let finished = false;
const cleanUp = (): void => {
  if (finished) return;
  finished = true;
  cluster.remove();
};
// test/production starts clusters of its own (it stops and restarts the server), so it runs once, in `npm test`. So
// do the tests of what clients are handed, whose subject is not the database: the API reference and the panel in
// chromium, the packed SDK, and the operator's command line (each command a process; the services it calls run in
// this pass over every face) (about 5 minutes of CI on a 2-core box).
const once = [
  "test/production/**",
  "test/docs/**",
  "test/panel/*.browser.test.ts",
  "sdk/test/package.test.ts",
  "test/ops/cli.test.ts",
  "test/connectivity/callback-cli.test.ts",
];
const child = spawn(
  process.execPath,
  ["node_modules/vitest/vitest.mjs", "run", ...once.flatMap((glob) => ["--exclude", glob]), ...process.argv.slice(2)],
  {
    stdio: "inherit",
    env: { ...process.env, DATABASE_URL: cluster.url() },
  },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  cleanUp();
  process.exit(code ?? (signal === null ? 1 : 128 + 1));
});
