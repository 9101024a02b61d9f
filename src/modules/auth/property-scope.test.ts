import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { create, createFileRegistry, setExtension, type DescService } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_descriptor,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import {
  AuthRuleSchema,
  file_hotelops_auth_v1_rule,
  PrincipalKind,
  PropertyScope,
  rule,
} from "../../../gen/hotelops/auth/v1/rule_pb.js";
import { bindingOf, checkPropertyBindings } from "./property-scope.ts";

/** A one-method service `hotelops.probe.v1.Probe/Call` whose request has `fields` and whose AuthRule is `r`. */
function probe(fields: string[], r: Parameters<typeof create<typeof AuthRuleSchema>>[1] | undefined): DescService {
  const options = create(MethodOptionsSchema);
  if (r !== undefined) setExtension(options, rule, create(AuthRuleSchema, r));
  const file = create(FileDescriptorProtoSchema, {
    name: "hotelops/probe/v1/probe.proto",
    package: "hotelops.probe.v1",
    syntax: "proto3",
    dependency: ["hotelops/auth/v1/rule.proto"],
    messageType: [
      {
        name: "CallRequest",
        field: fields.map((name, i) => ({ name, number: i + 1, type: 9 /* string */, label: 1, jsonName: name })),
      },
      { name: "CallResponse" },
    ],
    service: [
      {
        name: "Probe",
        method: [
          {
            name: "Call",
            inputType: ".hotelops.probe.v1.CallRequest",
            outputType: ".hotelops.probe.v1.CallResponse",
            options,
          },
        ],
      },
    ],
  });
  const registry = createFileRegistry(file, (name) =>
    name === "hotelops/auth/v1/rule.proto"
      ? file_hotelops_auth_v1_rule
      : name === "google/protobuf/descriptor.proto"
        ? file_google_protobuf_descriptor
        : undefined,
  );
  return registry.getService("hotelops.probe.v1.Probe")!;
}

const bindingOfProbe = (fields: string[], r?: Parameters<typeof probe>[1]) => bindingOf(probe(fields, r).methods[0]!);

/** Every service of the contract (gen/hotelops). */
async function contractServices(): Promise<DescService[]> {
  const root = new URL("../../../gen/hotelops/", import.meta.url);
  const found: DescService[] = [];
  for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith("_pb.js")) continue;
    const mod = (await import(new URL(file, root).href)) as Record<string, unknown>;
    for (const v of Object.values(mod))
      if (typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "service")
        found.push(v as DescService);
  }
  return found;
}

describe("property bindings read from the descriptors", () => {
  it("binds every RPC of the contract (the check the server runs at start)", async () => {
    const services = await contractServices();
    expect(services.length).toBeGreaterThan(10);
    expect(() => checkPropertyBindings(services)).not.toThrow();
  });

  it("binds a request with property_code to it, and a staff-only RPC to the session's active property", () => {
    expect(bindingOfProbe(["property_code", "folio_id"])).toBe("request");
    expect(bindingOfProbe(["endpoint_id"], { principals: [PrincipalKind.STAFF] })).toBe("session");
    expect(bindingOfProbe(["text"], { principals: [PrincipalKind.PARTNER] })).toBe("none");
    expect(bindingOfProbe(["device_id"], { public: true })).toBe("none");
    expect(
      bindingOfProbe(["property_code"], { principals: [PrincipalKind.INTERNAL], property: PropertyScope.NONE }),
    ).toBe("none");
  });

  it("refuses to start with an RPC that names a resource but no property it is bound to", () => {
    const uncovered = probe(["reservation_id"], { principals: [PrincipalKind.PARTNER] });
    expect(bindingOf(uncovered.methods[0]!)).toEqual({
      error:
        "hotelops.probe.v1.Probe.Call: its request names reservation_id but no property: add a property_code field " +
        "or declare (hotelops.auth.v1.rule).property",
    });
    expect(() => checkPropertyBindings([uncovered])).toThrow(/Property isolation: .*Probe\.Call/);
    // no rule at all: staff sessions and internal clients, so not the session's property either
    expect(() => checkPropertyBindings([probe(["guest_ids"], undefined)])).toThrow(/guest_ids but no property/);
  });

  it("refuses declarations the request or the principals contradict", () => {
    expect(bindingOfProbe(["folio_id"], { property: PropertyScope.REQUEST })).toHaveProperty("error");
    expect(
      bindingOfProbe(["folio_id"], { principals: [PrincipalKind.INTERNAL], property: PropertyScope.SESSION }),
    ).toHaveProperty("error");
    expect(
      bindingOfProbe(["property_code"], { principals: [PrincipalKind.STAFF], property: PropertyScope.SESSION }),
    ).toHaveProperty("error");
    expect(bindingOfProbe(["property_code"], { public: true })).toHaveProperty("error");
  });
});
