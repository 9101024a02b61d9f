// The npm registry reachable here lacks some platform builds of @bufbuild/buf (darwin, win32, linux-armv7), so
// `npm install` leaves them out of package-lock.json and `npm ci` then refuses the lock as out of sync.
// This records them as optional entries for their own os/cpu (never fetched on linux-x64). Run after `npm install`:
// `npm run lock:fix`.
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8")) as {
  packages: Record<string, { version?: string; optionalDependencies?: Record<string, string> }>;
};
const platforms: Record<string, [string, string]> = {
  "darwin-arm64": ["darwin", "arm64"],
  "darwin-x64": ["darwin", "x64"],
  "linux-aarch64": ["linux", "arm64"],
  "linux-armv7": ["linux", "arm"],
  "linux-x64": ["linux", "x64"],
  "win32-arm64": ["win32", "arm64"],
  "win32-x64": ["win32", "x64"],
};
const version = lock.packages["node_modules/@bufbuild/buf"]?.version;
let added = 0;
for (const [name, [os, cpu]] of Object.entries(platforms)) {
  const key = `node_modules/@bufbuild/buf-${name}`;
  if (version === undefined || lock.packages[key] !== undefined) continue;
  lock.packages[key] = {
    version,
    license: "Apache-2.0",
    optional: true,
    os: [os],
    cpu: [cpu],
    engines: { node: ">=12" },
  } as never;
  added++;
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock:fix: ${added} placeholder entries added`);
