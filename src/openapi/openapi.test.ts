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

/** int64 as the codec reads and writes it: a JSON number, exact within +-(2^53-1). */
const INT64 = { type: "integer", format: "int64", minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

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
  ajv.addFormat("date", /^\d{4}-\d\d-\d\d$/);
  ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat("uri", /^https?:\/\//);
  ajv.addFormat("email", /@/);
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
    // required inline: a `required` beside a $ref is ignored by OpenAPI 3.1 tools
    expect(events.parameters).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header", required: true }));
    expect(events.parameters.filter((p: Doc) => p.$ref !== undefined && Object.keys(p).length > 1)).toEqual([]);
    expect(events.parameters).toContainEqual(expect.objectContaining({ name: "propertyCode", in: "path", required: true }));
    expect(Object.keys(events.responses)).toContain("202");
    expect(events.security).toEqual([{ clientCredentials: ["reservations.write"] }, { clientToken: [] }]);
    expect(events.responses["202"].headers).toHaveProperty("RateLimit-Remaining");

    const token = committed.paths["/api/v1/oauth/token"].post;
    expect(Object.keys(token.requestBody.content)).toEqual(["application/x-www-form-urlencoded"]);
    expect(token.responses["401"]).toEqual({ $ref: "#/components/responses/OAuthError401" });
    expect(token.security).toEqual([]);
    expect(committed.components.securitySchemes.clientCredentials.flows.clientCredentials.tokenUrl).toBe("/api/v1/oauth/token");

    const availability = committed.paths["/api/v1/properties/{propertyCode}/availability"].get;
    expect(availability.parameters.map((p: Doc) => p.name)).toEqual(expect.arrayContaining(["propertyCode", "from", "to"]));
    expect(availability.security).toEqual([{ clientCredentials: ["availability.read"] }, { clientToken: [] }]);
    expect(committed.paths["/api/mobile/v1/dashboard"].get.security).toEqual([{ staffSession: [] }]);
  });
});

describe("committed document describes requests as the server enforces them", () => {
  const schemas = committed.components.schemas;
  it("has required lists, enums, date formats and required query parameters", () => {
    const create = schemas["hotelops.mobile.v1.CreateMobileReservationRequest"];
    expect(create.required).toEqual(["holderName", "arrivalDate", "departureDate", "roomTypeId", "ratePlanId", "adults", "totalMinor", "currency"]);
    expect(create.properties.arrivalDate).toMatchObject({ type: "string", format: "date" });
    expect(create.properties.totalMinor.type).toBe("integer");
    expect(create.properties.boardType.enum).toEqual(["ROOM_ONLY", "BED_AND_BREAKFAST", "HALF_BOARD", "FULL_BOARD", "ALL_INCLUSIVE", null]);
    expect(create.properties.status.enum).toEqual(["TENTATIVE", "GUARANTEED", null]);
    expect(create.properties.source.enum).toContain("MOBILE");
    const event = schemas["hotelops.connectivity.v1.CreateReservationEventRequest"];
    expect(event.required).toEqual(["eventType", "externalReference"]);
    expect(event.properties.eventType.enum).toEqual(["NEW", "MODIFIED", "CANCELLED"]);
    const availability = committed.paths["/api/v1/properties/{propertyCode}/availability"].get.parameters;
    for (const name of ["from", "to"]) expect(availability.find((p: Doc) => p.name === name)).toMatchObject({ in: "query", required: true, schema: { type: "string", format: "date" } });
  });

  it("documents the 401 of login, verify, refresh and the token endpoint", () => {
    for (const path of ["/api/mobile/v1/auth/login", "/api/mobile/v1/auth/verify", "/api/mobile/v1/auth/refresh"]) expect(committed.paths[path].post.responses["401"]).toEqual({ $ref: "#/components/responses/Error401" });
    expect(committed.paths["/api/v1/oauth/token"].post.responses["401"]).toEqual({ $ref: "#/components/responses/OAuthError401" });
  });

  it("describes login as exactly one of the challenge or the session result", () => {
    const login = schemas["hotelops.auth.v1.LoginResponse"];
    expect(login.oneOf.map((v: Doc) => [v.title, v.required])).toEqual([["challenge", ["challengeId", "maskedEmail", "expiresAt"]], ["session", ["tokens", "profile"]]]);
    const valid = validatorFor(committed, { $ref: "#/components/schemas/hotelops.auth.v1.LoginResponse" });
    const challenge = { challengeId: "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90", maskedEmail: "m*****r@demo.test", expiresAt: "2026-11-22T09:30:00.000Z" };
    expect(valid(challenge)).toBe(true);
    expect(valid({ ...challenge, tokens: null, profile: null })).toBe(false);
    expect(valid({ tokens: { accessToken: "a", refreshToken: "r", expiresIn: 900 }, profile: { userId: "u", activePropertyId: "p", properties: [] } })).toBe(true);
  });

  it("has an example for every body, each valid against its schema", () => {
    const bodies: [string, unknown, unknown][] = [];
    for (const [path, ops] of Object.entries(committed.paths as Doc)) {
      for (const [method, op] of Object.entries(ops as Doc)) {
        for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Doc)) if (type !== "multipart/form-data") bodies.push([`${method} ${path} request`, media.schema, media.example]);
        for (const [status, r] of Object.entries(op.responses as Doc)) {
          const media = (r.content ?? {})["application/json"];
          if (media === undefined || status !== String(Number(status)) || Number(status) >= 300) continue;
          const examples = media.examples === undefined ? [media.example] : Object.values(media.examples as Doc).map((e) => e.value);
          for (const example of examples) bodies.push([`${method} ${path} ${status}`, media.schema, example]);
        }
      }
    }
    expect(bodies.length).toBeGreaterThan(40);
    const wrong = bodies.filter(([, schema, example]) => example === undefined || !validatorFor(committed, schema as Schema)(example)).map(([name]) => name);
    expect(wrong).toEqual([]);
  });

  it("keeps no component nothing refers to", () => {
    const text = JSON.stringify(committed.paths);
    const reachable = new Set<string>();
    const queue = refsOf(committed.paths);
    while (queue.length > 0) {
      const ref = queue.pop()!;
      if (reachable.has(ref)) continue;
      reachable.add(ref);
      queue.push(...refsOf(resolve(committed, ref)));
    }
    for (const section of ["schemas", "responses", "headers", "parameters"]) {
      for (const name of Object.keys(committed.components[section] ?? {})) expect(reachable.has(`#/components/${section}/${name}`), `${section}/${name}`).toBe(true);
    }
    for (const scheme of Object.keys(committed.components.securitySchemes)) expect(text).toContain(`"${scheme}"`);
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
    expect(search.parameters.find((p: Doc) => p.name === "minAmount").schema).toEqual(INT64);
    expect(search.parameters.find((p: Doc) => p.name === "color").schema).toEqual({ type: "string", enum: ["RED", "DEEP_BLUE"] });
    expect(search.responses["200"].content["application/json"].schema).toEqual({ type: "array", items: { $ref: "#/components/schemas/hotelops.gatewaytest.v1.Thing" } });

    const form = testDoc.paths["/t/v1/form"].post;
    expect(Object.keys(form.requestBody.content)).toEqual(["application/x-www-form-urlencoded"]);
    expect(form.responses["400"]).toEqual({ $ref: "#/components/responses/OAuthError400" });

    const upload = testDoc.paths["/t/v1/upload"].post.requestBody.content["multipart/form-data"].schema;
    expect(upload.properties.images).toEqual({ type: "array", items: { type: "string", contentMediaType: "application/octet-stream" } });
    expect(upload.properties.documentType).toEqual({ type: ["string", "null"] });
  });

  it("describes the codec's JSON: camelCase, int64 numbers, timestamps, nulls, short enum names, maps", () => {
    const thing = testDoc.components.schemas["hotelops.gatewaytest.v1.Thing"];
    expect(thing.properties.amountMinor).toEqual(INT64);
    expect(thing.properties.createdAt).toEqual({ type: ["string", "null"], format: "date-time", examples: ["2026-11-22T09:30:00.000Z"] });
    expect(thing.properties.note).toEqual({ type: ["string", "null"] });
    expect(thing.properties.totals).toEqual({ type: "object", additionalProperties: INT64 });
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
