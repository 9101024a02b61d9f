import { readFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { CodecSampleSchema, Color, GatewayTestService, ThingSchema } from "../../test/gen/hotelops/gatewaytest/v1/gateway_test_pb.js";
import { render } from "../gateway/codec.ts";
import { buildOpenApi } from "./document.ts";
import { SchemaRegistry, type Schema } from "./schema.ts";

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const committedText = readFileSync(new URL("../../openapi/hotelops.v1.json", import.meta.url), "utf8");
const committed = JSON.parse(committedText) as Doc;
const testDoc = buildOpenApi([GatewayTestService], { title: "t", version: "v1", description: "t" }) as Doc;

function refsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsOf(v, out));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refsOf(v, out);
    }
  }
  return out;
}

function resolve(doc: Doc, ref: string): unknown {
  return ref
    .slice(2)
    .split("/")
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
}

/** Ajv 2020-12 over the document's components, as an OpenAPI 3.1 consumer reads them. */
function validatorFor(doc: Doc, schema: Schema): (value: unknown) => boolean {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const f of ["int32", "int64", "uint32", "double", "float"]) ajv.addFormat(f, true);
  ajv.addFormat("date-time", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  ajv.addSchema({ $id: "doc", components: doc.components });
  const rewrite = (s: unknown): unknown => JSON.parse(JSON.stringify(s).replaceAll('"#/components/', '"doc#/components/'));
  for (const name of Object.keys(doc.components.schemas)) ajv.addSchema(rewrite(doc.components.schemas[name]) as object, `doc#/components/schemas/${name}`);
  return ajv.compile(rewrite(schema) as object);
}

describe("committed OpenAPI document", () => {
  it("is valid OpenAPI 3.1 with every $ref resolvable", async () => {
    const result = await new Validator().validate(structuredClone(committed));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const broken = refsOf(committed).filter((r) => resolve(committed, r) === undefined);
    expect(broken).toEqual([]);
  });

  it("documents the connectivity endpoints with their auth, idempotency and error styles", () => {
    const status = committed.paths["/api/v1/status"].get;
    expect(status.security).toEqual([]);
    expect(status.description).toContain("operational");
    expect(status.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/hotelops.status.v1.GetStatusResponse" });
    expect(committed.components.schemas["hotelops.status.v1.GetStatusResponse"].required).toEqual(["status", "apiVersion", "partnerApi", "partnerApiRelease"]);

    const events = committed.paths["/api/v1/properties/{propertyCode}/reservation-events"].post;
    expect(events.parameters).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey", required: true });
    expect(events.parameters).toContainEqual(expect.objectContaining({ name: "propertyCode", in: "path", required: true }));
    expect(Object.keys(events.responses)).toContain("202");
    expect(events.security).toContainEqual({ clientCredentials: ["reservations.write"] });
    expect(events.responses["202"].headers).toHaveProperty("RateLimit-Remaining");

    const token = committed.paths["/api/v1/oauth/token"].post;
    expect(Object.keys(token.requestBody.content)).toEqual(["application/x-www-form-urlencoded"]);
    expect(token.responses["401"]).toEqual({ $ref: "#/components/responses/OAuthError401" });
    expect(token.security).toEqual([]);
    expect(committed.components.securitySchemes.clientCredentials.flows.clientCredentials.tokenUrl).toBe("/api/v1/oauth/token");

    const availability = committed.paths["/api/v1/properties/{propertyCode}/availability"].get;
    expect(availability.parameters.map((p: Doc) => p.name)).toEqual(expect.arrayContaining(["propertyCode", "from", "to"]));
    expect(availability.security).toEqual([{ clientCredentials: ["availability.read"] }]);
  });
});

describe("document built from the gateway's route table", () => {
  it("turns path templates, bodies, query fields and RestOptions into operations", () => {
    expect(Object.keys(testDoc.paths)).toEqual(
      expect.arrayContaining(["/t/v1/properties/{propertyCode}/things/{thing.id}", "/t/v1/things/{thing.id}", "/t/v1/things/{id}", "/t/v1/files/{path}", "/t/v1/form", "/t/v1/upload"]),
    );
    const get = testDoc.paths["/t/v1/properties/{propertyCode}/things/{thing.id}"].get;
    expect(get.parameters.map((p: Doc) => `${p.in}:${p.name}`)).toEqual(["path:propertyCode", "path:thing.id", "query:verbose"]);
    expect(testDoc.paths["/t/v1/things/{thing.id}"].get.operationId).toBe("GatewayTestService_GetThing2");

    const create = testDoc.paths["/t/v1/properties/{propertyCode}/things"].post;
    expect(Object.keys(create.responses)).toContain("201");
    expect(create.requestBody.content["application/json"].schema).toEqual({ anyOf: [{ $ref: "#/components/schemas/hotelops.gatewaytest.v1.ThingInput" }, { type: "null" }] });
    expect(create.parameters).toEqual([expect.objectContaining({ name: "propertyCode", in: "path" }), expect.objectContaining({ name: "dryRun", in: "query" }), { $ref: "#/components/parameters/IdempotencyKey" }]);

    const update = testDoc.paths["/t/v1/things/{id}"].patch;
    const body = testDoc.components.schemas["hotelops.gatewaytest.v1.UpdateThingRequest"];
    expect(update.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/hotelops.gatewaytest.v1.UpdateThingRequest" });
    expect(Object.keys(body.properties)).not.toContain("id");
    expect(body.required).toBeUndefined();

    const del = testDoc.paths["/t/v1/things/{id}"].delete;
    expect(del.responses["204"].content).toBeUndefined();

    const search = testDoc.paths["/t/v1/things"].get;
    expect(search.parameters.map((p: Doc) => p.name)).toEqual(["tags", "counts", "parent.id", "color", "active", "minAmount", "updatedSince", "limit"]);
    expect(search.parameters.find((p: Doc) => p.name === "minAmount").schema).toEqual({ type: "integer", format: "int64" });
    expect(search.parameters.find((p: Doc) => p.name === "color").schema).toEqual({ type: "string", enum: ["RED", "DEEP_BLUE"] });
    expect(search.responses["200"].content["application/json"].schema).toEqual({ type: "array", items: { $ref: "#/components/schemas/hotelops.gatewaytest.v1.Thing" } });

    const form = testDoc.paths["/t/v1/form"].post;
    expect(Object.keys(form.requestBody.content)).toEqual(["application/x-www-form-urlencoded"]);
    expect(form.responses["400"]).toEqual({ $ref: "#/components/responses/OAuthError400" });

    const upload = testDoc.paths["/t/v1/upload"].post.requestBody.content["multipart/form-data"].schema;
    expect(upload.properties.images).toEqual({ type: "array", items: { type: "string", contentMediaType: "application/octet-stream" } });
    expect(upload.properties.documentType).toEqual({ type: "string" });
  });

  it("describes the codec's JSON: camelCase, int64 numbers, timestamps, nulls, short enum names, maps", () => {
    const thing = testDoc.components.schemas["hotelops.gatewaytest.v1.Thing"];
    expect(thing.properties.amountMinor).toEqual({ type: "integer", format: "int64" });
    expect(thing.properties.createdAt).toEqual({ type: ["string", "null"], format: "date-time", examples: ["2026-11-22T09:30:00.000Z"] });
    expect(thing.properties.note).toEqual({ type: ["string", "null"] });
    expect(thing.properties.totals).toEqual({ type: "object", additionalProperties: { type: "integer", format: "int64" } });
    expect(testDoc.components.schemas["hotelops.gatewaytest.v1.Color"]).toEqual({ type: ["string", "null"], enum: ["RED", "DEEP_BLUE", null] });

    const valid = validatorFor(testDoc, { $ref: "#/components/schemas/hotelops.gatewaytest.v1.Thing" });
    const empty = render(ThingSchema, create(ThingSchema));
    const full = render(
      ThingSchema,
      create(ThingSchema, { id: "t1", name: "n", amountMinor: 12_345n, createdAt: timestampFromDate(new Date("2026-11-22T09:30:00.123Z")), note: "x", channel: "web", color: Color.DEEP_BLUE, tags: ["a"], active: true, count: 3, parent: { id: "p" }, totals: { a: 5n }, palette: [Color.RED] }),
    );
    expect(valid(empty)).toBe(true);
    expect(valid(full)).toBe(true);
    // the schema can fail: proto-JSON shapes the codec never sends are rejected
    expect(valid({ ...(full as object), amountMinor: "12345" })).toBe(false);
    expect(valid({ ...(full as object), color: "COLOR_DEEP_BLUE" })).toBe(false);
    expect(valid({ ...(full as object), created_at: null })).toBe(false);
    const { note: _dropped, ...missing } = full as Record<string, unknown>;
    expect(valid(missing)).toBe(false);
  });

  it("covers every field kind the codec renders (CodecSample), set and unset", () => {
    const registry = new SchemaRegistry();
    const ref = registry.message(CodecSampleSchema, "out");
    const doc = { components: { schemas: registry.components } };
    const valid = validatorFor(doc, ref);
    expect(valid(render(CodecSampleSchema, create(CodecSampleSchema)))).toBe(true);
    const sample = create(CodecSampleSchema, {
      bigUnsigned: 4_000_000_000,
      small: -3,
      ratio: 0.5,
      weight: 1.5,
      blob: new Uint8Array([1, 2]),
      total: 9_007_199_254_740_991n,
      attributes: { a: 1 },
      anything: { kind: { case: "stringValue", value: "v" } },
      list: { values: [{ kind: { case: "numberValue", value: 1 } }] },
      maybeAmount: 7n,
      maybeBlob: new Uint8Array([3]),
      maybeFlag: false,
      maybeCount: 2,
      labels: [{ value: "l" }],
      times: [timestampFromDate(new Date(0))],
      byNumber: { 1: "one" },
      things: { k: { id: "x" } },
      colors: { true: Color.RED },
      target: { case: "roomRef", value: { id: "r" } },
      mode: 1,
      optionalAmount: 0n,
      optionalColor: Color.RED,
      amounts: [1n],
      chunks: [new Uint8Array([9])],
      displayName: "d",
      elapsed: { seconds: 1n, nanos: 500_000_000 },
    });
    const json = render(CodecSampleSchema, sample) as Record<string, unknown>;
    expect(json.label).toBe("d");
    expect(valid(json)).toBe(true);
    expect(valid({ ...json, mode: "MODE_FAST" })).toBe(false);
    expect(valid({ ...json, total: "9007199254740991" })).toBe(false);
  });
});
