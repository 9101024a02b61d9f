import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "sdk/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // every REST exchange of the tests is checked against the OpenAPI document (both directions)
    setupFiles: ["test/helpers/openapi-setup.ts"],
    pool: "forks",
    testTimeout: 15_000,
    hookTimeout: 60_000,
    // CI names its JSON report on the command line (.ci/run: one file per run), so the config adds none.
    reporters: ["default"],
  },
});
