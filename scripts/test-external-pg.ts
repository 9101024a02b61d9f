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
// test/production starts clusters of its own (it stops and restarts the server), so it runs once, in `npm test`.
const child = spawn(
  process.execPath,
  ["node_modules/vitest/vitest.mjs", "run", "--exclude", "test/production/**", ...process.argv.slice(2)],
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
