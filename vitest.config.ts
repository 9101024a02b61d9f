import { configDefaults, defineConfig } from "vitest/config";

const files = ["src/**/*.test.ts", "test/**/*.test.ts", "sdk/**/*.test.ts"];

// Files that must have the machine to themselves: they start and kill processes (servers, workers, PostgreSQL,
// chromium, the CLI), hold a rule on the real clock (deadlines, rates, stalls, event-loop delay) or count a
// process's resources. They run after the rest, one at a time; everything else runs TEST_WORKERS files at once.
const serial = [
  "test/production/*.test.ts",
  "test/crash/*.test.ts",
  "test/docs/*.test.ts",
  "test/lifecycle/*.test.ts",
  "test/ops/*.test.ts",
  "test/jobs/*.test.ts",
  "test/fuzz/*.test.ts",
  "test/panel/*.browser.test.ts",
  "test/clients/*.test.ts",
  "test/db/embedded.test.ts",
  "test/db/migration-failure.test.ts",
  "test/webhooks/{timing,throttle-processes,crash,recovery,delivery}.test.ts",
  "test/server/{connections,slow-readers,deadlines,anonymous-cost}.test.ts",
  "test/platform/rate-limit.test.ts",
  "test/events/slow-reader.test.ts",
  "test/auth/token-limits.test.ts",
  "test/audit/audit-cli.test.ts",
  // guest reports retried with backoff on the real clock (a 1 s delay) by the worker
  "test/guests/reporting.test.ts",
  "test/connectivity/{mapping-cli,callback-cli}.test.ts",
  "test/**/inventory-verify*.test.ts",
  "src/modules/identity/identity.service.test.ts",
  "sdk/test/package.test.ts",
];

const workers = Number(process.env.TEST_WORKERS ?? 2);

export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts"],
    // every REST exchange of the tests is checked against the OpenAPI document (both directions)
    setupFiles: ["test/helpers/openapi-setup.ts"],
    pool: "forks",
    testTimeout: 15_000,
    hookTimeout: 60_000,
    // CI names its JSON report on the command line (.ci/run: one file per run), so the config adds none.
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "parallel",
          include: files,
          exclude: [...configDefaults.exclude, ...serial],
          maxWorkers: workers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "serial", include: serial, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
