// Builds the panel (panel/src, Preact + the SDK's browser client from sdk/src) into panel/dist with esbuild:
// content-hashed assets under dist/assets and an index.html naming them. Runs before `npm start` and `npm test`
// (package.json prestart/pretest) and from the panel's browser test; takes well under a second.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = fileURLToPath(new URL(".", import.meta.url));
export const panelDist = join(here, "dist");

export async function buildPanel(outDir = panelDist): Promise<{ js: string; css: string }> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, "assets"), { recursive: true });
  const result = await esbuild.build({
    entryPoints: { app: join(here, "src/main.tsx") },
    bundle: true,
    format: "esm",
    target: ["es2022"],
    platform: "browser",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: join(outDir, "assets"),
    entryNames: "[name]-[hash]",
    metafile: true,
    logLevel: "warning",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.endsWith(".js"));
  const css = outputs.find((f) => f.endsWith(".css"));
  if (js === undefined || css === undefined) throw new Error(`panel build produced ${outputs.join(", ")}`);
  writeFileSync(join(outDir, "index.html"), indexHtml(js, css));
  return { js, css };
}

function indexHtml(js: string, css: string): string {
  return `<!doctype html>
<html lang="tr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>HotelOps Panel</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/panel/assets/${css}">
<script type="module" src="/panel/assets/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The panel needs JavaScript. / Panel JavaScript gerektirir.</noscript>
</body>
</html>
`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  const out = await buildPanel();
  console.log(`panel built into panel/dist (${out.js}, ${out.css}) in ${Math.round(performance.now() - started)} ms`);
}
