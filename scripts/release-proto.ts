// npm run release:proto: records the contract as released. Writes proto-release/hotelops.v1.json, a buf image
// (JSON, no source info) of proto/, which `npm run check` compares the working tree against with
// `buf breaking` (FILE rules, buf.yaml). A committed file works offline and in a fresh or shallow clone, where
// `.git#branch=main` would compare main with itself and `.git#ref=HEAD~1` has no history to read.
// Run it when a version ships, and commit the file; accepting a breaking change is then an explicit diff.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const RELEASED_IMAGE = "proto-release/hotelops.v1.json";

const json = execFileSync("buf", ["build", "proto", "--exclude-source-info", "-o", "-#format=json"], {
  cwd: root,
  maxBuffer: 64 * 1024 * 1024,
}).toString("utf8");
mkdirSync(join(root, "proto-release"), { recursive: true });
// pretty-printed so that a release shows up as a readable diff
writeFileSync(join(root, RELEASED_IMAGE), `${JSON.stringify(JSON.parse(json), null, 1)}\n`);
console.log(`wrote ${RELEASED_IMAGE}`);
