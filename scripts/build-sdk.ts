// npm run sdk:build: sdk/dist, the publishable @hotelops/sdk. Compiles sdk/src (tests left out) to ES2022 ESM
// JavaScript with .d.ts, and puts the generated descriptors it re-exports (gen/hotelops, gen/google) inside as
// dist/gen, so the package needs nothing from this repository. sdk/src itself stays importable from source.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "sdk/dist");
// inside the repository, so @bufbuild/protobuf and @connectrpc/* resolve from its node_modules while compiling
const stage = join(root, "sdk/.build");
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
try {
  writeFileSync(join(stage, "package.json"), '{ "type": "module" }\n');
  // sources import ../../gen/... (the repository layout); in the package the generated code sits beside them
  for (const name of readdirSync(join(root, "sdk/src"))) {
    if (!name.endsWith(".ts") || name.endsWith(".test.ts")) continue;
    writeFileSync(
      join(stage, name),
      readFileSync(join(root, "sdk/src", name), "utf8").replaceAll('"../../gen/', '"./gen/'),
    );
  }
  const generated = (src: string): boolean => !src.endsWith(".json");
  for (const dir of ["hotelops", "google"])
    cpSync(join(root, "gen", dir), join(stage, "gen", dir), { recursive: true, filter: generated });
  writeFileSync(
    join(stage, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2022",
        lib: ["es2022", "dom"],
        module: "nodenext",
        moduleResolution: "nodenext",
        types: ["node"],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        rewriteRelativeImportExtensions: true,
        allowImportingTsExtensions: true,
        verbatimModuleSyntax: true,
        declaration: true,
        skipLibCheck: true,
        rootDir: ".",
        outDir: dist,
      },
      include: ["*.ts"],
    }),
  );
  rmSync(dist, { recursive: true, force: true });
  execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", join(stage, "tsconfig.json")], {
    stdio: "inherit",
    cwd: root,
  });
  cpSync(join(stage, "gen"), join(dist, "gen"), { recursive: true });
  // declaration emit keeps the sources' ".ts" specifiers; consumers resolve the emitted ".js" (and its .d.ts)
  for (const name of readdirSync(dist)) {
    if (!name.endsWith(".d.ts")) continue;
    const file = join(dist, name);
    writeFileSync(file, readFileSync(file, "utf8").replace(/(from\s+|import\()"(\.\.?\/[^"]+)\.ts"/g, '$1"$2.js"'));
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
console.log(`sdk:build: wrote ${dist}`);
