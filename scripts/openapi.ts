// npm run openapi: writes openapi/hotelops.v1.json (REST faces) and sdk/src/services.ts (every service of the
// contract) from `buf build proto` (descriptors with source info, so proto comments become descriptions).
// `--check` writes nothing and exits 1 when a committed file is out of date (npm run check).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createFileRegistry, fromBinary, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { buildOpenApi } from "../src/openapi/document.ts";
import { API_DESCRIPTION } from "../src/openapi/info.ts";
import { sdkServicesModule } from "../src/openapi/sdk-services.ts";
import { withWebhooks } from "../src/openapi/webhooks.ts";

const root = new URL("..", import.meta.url).pathname;

export function loadServices(): DescService[] {
  const image = execFileSync("buf", ["build", "proto", "--as-file-descriptor-set", "-o", "-"], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, image));
  const services: DescService[] = [];
  for (const file of registry.files) {
    if (file.proto.package.startsWith("hotelops.")) services.push(...file.services);
  }
  return services.sort((a, b) => a.typeName.localeCompare(b.typeName));
}

export function artifacts(services: DescService[]): Map<string, string> {
  const doc = withWebhooks(
    buildOpenApi(services, { title: "HotelOps API", version: "v1", description: API_DESCRIPTION }),
  );
  return new Map([
    ["openapi/hotelops.v1.json", `${JSON.stringify(doc, null, 2)}\n`],
    ["sdk/src/services.ts", sdkServicesModule(services)],
  ]);
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  const stale: string[] = [];
  for (const [path, text] of artifacts(loadServices())) {
    const file = join(root, path);
    let current: string | undefined;
    try {
      current = readFileSync(file, "utf8");
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    if (check) stale.push(path);
    else {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      console.log(`wrote ${path}`);
    }
  }
  if (stale.length > 0) {
    console.error(`out of date (run npm run openapi): ${stale.join(", ")}`);
    process.exit(1);
  }
}
