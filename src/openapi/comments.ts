import type { AnyDesc, DescFile } from "@bufbuild/protobuf";
import { getComments } from "@bufbuild/protoplugin";

/**
 * The leading proto comment of an element as an OpenAPI description. Comments exist only in descriptors built
 * with source info (`buf build` keeps it by default); the descriptors embedded in gen/ have none, so
 * generation reads `buf build` output (scripts/openapi.ts).
 */
export function commentOf(desc: Exclude<AnyDesc, DescFile>): string | undefined {
  const raw = getComments(desc).leading;
  if (raw === undefined) return undefined;
  const text = raw
    .split("\n")
    .map((line) => (line.startsWith(" ") ? line.slice(1) : line).trimEnd())
    .join("\n")
    .trim();
  return text === "" ? undefined : text;
}

/** `{description}` when the element has a comment, else nothing (spread into a schema). */
export function describe(desc: Exclude<AnyDesc, DescFile>): { description?: string } {
  const text = commentOf(desc);
  return text === undefined ? {} : { description: text };
}
