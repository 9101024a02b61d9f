import { getOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { createContextKey, type ContextValues } from "@connectrpc/connect";
import type pg from "pg";
import { PrincipalKind, PropertyScope, rule as ruleOption } from "../../../gen/hotelops/auth/v1/rule_pb.js";
import type { Principal } from "./principal.ts";
import { requireProperty, type PropertyRef } from "./scope.ts";

// Property isolation by construction: how an RPC is bound to a property comes from its descriptor (the request's
// `property_code` field, the AuthRule's principals and its `property` option), is checked for every RPC when the
// server starts, and the property a request names is resolved against the caller's reach in one place, the
// authentication interceptor. Handlers read the resolved property (`requestProperty`), never a code.

export type Binding = "request" | "session" | "none";

/** The request field that names the property an RPC acts in. */
const codeField = "property_code";

/** A field that names a resource: a property's (reservation_id, folio_id, ...) unless the RPC is bound to none. */
const idField = /_ids?$/;

/**
 * The property binding of a method, or a reason the server must not start: a request that names a property's
 * resource (an id) must act in a property the caller's reach was checked for, or declare that it is bound to none.
 */
export function bindingOf(method: DescMethod): Binding | { error: string } {
  const r = getOption(method, ruleOption);
  const hasCode = method.input.fields.some((f) => f.name === codeField && f.fieldKind === "scalar");
  const ids = method.input.fields.filter((f) => idField.test(f.name)).map((f) => f.name);
  const staffOnly = r.principals.length > 0 && r.principals.every((k) => k === PrincipalKind.STAFF);
  const name = `${method.parent.typeName}.${method.name}`;
  if (r.public) {
    if (r.property !== PropertyScope.UNSPECIFIED) return { error: `${name}: a public RPC has no property binding` };
    return hasCode ? { error: `${name}: a public RPC names a property (${codeField})` } : "none";
  }
  switch (r.property) {
    case PropertyScope.NONE:
      return "none";
    case PropertyScope.REQUEST:
      return hasCode ? "request" : { error: `${name}: PROPERTY_SCOPE_REQUEST without a ${codeField} field` };
    case PropertyScope.SESSION:
      if (!staffOnly) return { error: `${name}: PROPERTY_SCOPE_SESSION needs principals: [PRINCIPAL_KIND_STAFF]` };
      return hasCode ? { error: `${name}: PROPERTY_SCOPE_SESSION with a ${codeField} field` } : "session";
    default:
      if (hasCode) return "request";
      if (staffOnly) return "session";
      if (ids.length > 0)
        return {
          error:
            `${name}: its request names ${ids.join(", ")} but no property: add a ${codeField} field ` +
            "or declare (hotelops.auth.v1.rule).property",
        };
      return "none";
  }
}

/** Every method of the services bound to a property, or an error naming each one that is not (called at start). */
export function checkPropertyBindings(services: readonly DescService[]): void {
  const errors: string[] = [];
  for (const s of services) {
    if (!s.typeName.startsWith("hotelops.")) continue;
    for (const m of s.methods) {
      const b = bindingOf(m);
      if (typeof b !== "string") errors.push(b.error);
    }
  }
  if (errors.length > 0) throw new Error(`Property isolation: ${errors.join("; ")}`);
}

/** What the interceptor resolved for a request-bound call: the property, or none when a client named none. */
const resolvedKey = createContextKey<{ property: PropertyRef | undefined } | undefined>(undefined);

/**
 * Resolves the property a request-bound call names (empty: a staff session's active property; a client that names
 * none gets `undefined`, and the handler says what it needs). Another property's code throws `not_found`.
 */
export async function bindProperty(
  pool: pg.Pool,
  principal: Principal,
  message: unknown,
  values: ContextValues,
): Promise<void> {
  const code = (message as { propertyCode?: unknown }).propertyCode;
  const named = typeof code === "string" ? code : "";
  const target = named !== "" ? named : principal.kind === "staff" ? principal.activePropertyId : "";
  const property = target === "" ? undefined : await requireProperty({ pool }, principal, target);
  values.set(resolvedKey, { property });
}

/**
 * The property of a request-bound call, already checked against the caller's reach; `undefined` when a client
 * named no property. Throws (a 500, a bug) when the method is not request-bound: its binding is in its descriptor.
 */
export function requestProperty(values: ContextValues): PropertyRef | undefined {
  const resolved = values.get(resolvedKey);
  if (resolved === undefined) throw new Error("requestProperty: the method is not bound to its request's property");
  return resolved.property;
}
