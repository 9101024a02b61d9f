// The compiled renderers (a function per message type, built with new Function in codec.ts) against the interpreted
// renderer beside them: random messages of every message type of the contract render to the same JSON.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import {
  create,
  ScalarType,
  type DescField,
  type DescFile,
  type DescMessage,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { render, renderInterpreted } from "./codec.ts";

const genRoot = join(import.meta.dirname, "../../gen/hotelops");

async function contractMessages(): Promise<DescMessage[]> {
  const out: DescMessage[] = [];
  const walk = (m: DescMessage): void => {
    out.push(m);
    m.nestedMessages.forEach(walk);
  };
  for (const area of readdirSync(genRoot))
    for (const file of readdirSync(join(genRoot, area, "v1")).filter((f) => f.endsWith("_pb.js"))) {
      const module = (await import(join(genRoot, area, "v1", file))) as Record<string, unknown>;
      for (const value of Object.values(module))
        if ((value as Partial<DescFile>)?.kind === "file") (value as DescFile).messages.forEach(walk);
    }
  return out.filter((m) => !m.typeName.startsWith("google."));
}

const MAX = Number.MAX_SAFE_INTEGER;

function scalar(type: ScalarType): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.STRING:
      return fc.string({ maxLength: 8 });
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 6 });
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.oneof(fc.double({ noNaN: false }), fc.integer());
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return fc.bigInt(BigInt(-MAX), BigInt(MAX));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.bigInt(0n, BigInt(MAX));
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    default:
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
  }
}

function timestamp(): fc.Arbitrary<unknown> {
  return fc
    .record({ seconds: fc.bigInt(0n, 253402300799n), nanos: fc.integer({ min: 0, max: 999_999_999 }) })
    .map((t) => ({ $typeName: "google.protobuf.Timestamp", ...t }));
}

function messageValue(desc: DescMessage, depth: number): fc.Arbitrary<unknown> {
  if (desc.typeName === "google.protobuf.Timestamp") return timestamp();
  if (desc.typeName.startsWith("google.protobuf.") && desc.fields.length === 1 && desc.fields[0]!.name === "value") {
    const f = desc.fields[0]!;
    return (f.fieldKind === "scalar" ? scalar(f.scalar) : fc.constant(undefined)).map((value) => ({ value }));
  }
  if (desc.typeName.startsWith("google.protobuf.")) return fc.constant({});
  return initShape(desc, depth + 1);
}

function item(field: DescField, kind: string, depth: number): fc.Arbitrary<unknown> {
  if (kind === "scalar") return scalar((field as { scalar: ScalarType }).scalar);
  if (kind === "enum")
    return fc.constantFrom(...(field as { enum: { values: { number: number }[] } }).enum.values.map((v) => v.number));
  return messageValue((field as { message: DescMessage }).message, depth);
}

function fieldValue(field: DescField, depth: number): fc.Arbitrary<unknown> {
  switch (field.fieldKind) {
    case "list":
      return fc.array(item(field, field.listKind, depth), { maxLength: depth > 2 ? 0 : 3 });
    case "map":
      return fc.dictionary(fc.string({ maxLength: 4 }), item(field, field.mapKind, depth), {
        maxKeys: depth > 2 ? 0 : 3,
      });
    default:
      return item(field, field.fieldKind, depth);
  }
}

/** A random init shape of `desc` (what an RPC implementation returns): any field may be left out. */
function initShape(desc: DescMessage, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  if (depth > 3) return fc.constant({});
  const plain = desc.fields.filter((f) => f.oneof === undefined);
  const record = fc.record(Object.fromEntries(plain.map((f) => [f.localName, fieldValue(f, depth)])), {
    requiredKeys: [],
  });
  const oneofs = desc.oneofs.map((o) =>
    fc.option(fc.oneof(...o.fields.map((f) => fieldValue(f, depth).map((value) => ({ case: f.localName, value })))), {
      nil: undefined,
    }),
  );
  return fc.tuple(record, ...oneofs).map(([fields, ...chosen]) => {
    const out: Record<string, unknown> = { ...fields };
    desc.oneofs.forEach((o, i) => {
      if (chosen[i] !== undefined) out[o.localName] = chosen[i];
    });
    return out;
  });
}

/** The rendering, or the error it ends with (both renderers refuse the same values). */
function outcome(f: () => unknown): unknown {
  try {
    return { json: f() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe("compiled renderers", () => {
  it("render every message type of the contract like the interpreted renderer (init shapes and messages)", async () => {
    const messages = await contractMessages();
    expect(messages.length).toBeGreaterThan(100);
    for (const desc of messages) {
      fc.assert(
        fc.property(initShape(desc), (shape) => {
          expect(
            outcome(() => render(desc, shape)),
            desc.typeName,
          ).toEqual(outcome(() => renderInterpreted(desc, shape)));
          const message = outcome(() => create(desc, shape as MessageInitShape<DescMessage>));
          if ("json" in (message as object)) {
            const m = (message as { json: ReturnType<typeof create> }).json;
            expect(
              outcome(() => render(desc, m)),
              desc.typeName,
            ).toEqual(outcome(() => renderInterpreted(desc, m)));
          }
        }),
        { numRuns: 25 },
      );
    }
  }, 120_000);
});
