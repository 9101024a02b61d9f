// Compiles the service (src/main.ts and what it imports) into one ES module, dist/main.js, with esbuild: packages
// stay external (node_modules), our TypeScript becomes plain JavaScript. `npm start` runs the compiled file: Node
// then never loads its TypeScript stripper (about 18 MiB of resident memory) nor keeps hundreds of module records.
// Runs before `npm start` and `npm run bench` (package.json prestart/prebench); takes well under a second.
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
export const serverEntry = fileURLToPath(new URL("../dist/main.js", import.meta.url));

/**
 * `import.meta.url` in a source file names that file (src/server/docs.ts finds ../../openapi from it): in the bundle
 * it becomes the URL of the original source file, relative to the bundle, so every such path resolves as before.
 */
const sourceUrls: esbuild.Plugin = {
  name: "source-import-meta-url",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      const text = await readFile(args.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      const fromDist = relative(`${root}/dist`, args.path).replaceAll("\\", "/");
      return {
        contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(fromDist)}, import.meta.url).href`),
        loader: "ts",
      };
    });
  },
};

export async function buildServer(): Promise<void> {
  await esbuild.build({
    entryPoints: [`${root}/src/main.ts`],
    outfile: serverEntry,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node22",
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
    plugins: [sourceUrls],
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildServer();
