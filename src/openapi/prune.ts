type Json = Record<string, unknown>;

/**
 * Drops components nothing refers to. References are followed from every part of the document outside
 * `components` (paths, webhooks, ...) and then from the components they reach, so a component used only by
 * another unused component goes too. Security schemes are referenced by name from `security` lists.
 */
export function pruneComponents<T extends Json>(doc: T): T {
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown>>;
  const reached = new Set<string>();
  const queue: unknown[] = Object.entries(doc).filter(([k]) => k !== "components").map(([, v]) => v);
  const usedSchemes = new Set<string>();
  while (queue.length > 0) {
    const node = queue.pop();
    if (Array.isArray(node)) queue.push(...node);
    else if (node !== null && typeof node === "object") {
      for (const [k, v] of Object.entries(node)) {
        if (k === "$ref" && typeof v === "string" && v.startsWith("#/components/") && !reached.has(v)) {
          reached.add(v);
          const [, , section, name] = v.split("/");
          queue.push(components[section!]?.[name!]);
        } else if (k === "security" && Array.isArray(v)) {
          for (const req of v) for (const scheme of Object.keys(req as object)) usedSchemes.add(scheme);
        } else queue.push(v);
      }
    }
  }
  const out: Record<string, Record<string, unknown>> = {};
  for (const [section, entries] of Object.entries(components)) {
    const kept = Object.fromEntries(
      Object.entries(entries).filter(([name]) => (section === "securitySchemes" ? usedSchemes.has(name) : reached.has(`#/components/${section}/${name}`))),
    );
    if (Object.keys(kept).length > 0) out[section] = kept;
  }
  return { ...doc, components: out };
}
