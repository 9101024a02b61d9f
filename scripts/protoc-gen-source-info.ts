// A buf/protoc plugin (buf.gen.yaml, strategy all): writes gen/source_info.json, the SourceCodeInfo (comments and
// spans) of every file of proto/, base64 per file name. The descriptors protoc-gen-es embeds in gen/ carry no
// comments; gRPC reflection adds these back so `buf curl --reflect` and grpcurl users see the documentation.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  CodeGeneratorRequestSchema,
  CodeGeneratorResponseSchema,
  CodeGeneratorResponse_Feature,
  SourceCodeInfoSchema,
} from "@bufbuild/protobuf/wkt";
import { readFileSync, writeSync } from "node:fs";

const req = fromBinary(CodeGeneratorRequestSchema, readFileSync(0));
const wanted = new Set(req.fileToGenerate);
const out: Record<string, string> = {};
for (const file of req.protoFile) {
  if (!wanted.has(file.name) || file.sourceCodeInfo === undefined) continue;
  // only commented elements: that is what reflection users read (spans stay: descriptor parsers require them)
  const locations = file.sourceCodeInfo.location.filter(
    (l) => l.leadingComments !== "" || l.trailingComments !== "" || l.leadingDetachedComments.length > 0,
  );
  out[file.name] = Buffer.from(
    toBinary(SourceCodeInfoSchema, create(SourceCodeInfoSchema, { location: locations })),
  ).toString("base64");
}
const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
const res = create(CodeGeneratorResponseSchema, {
  supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
  file: [{ name: "source_info.json", content: `${JSON.stringify(sorted, null, 1)}\n` }],
});
const bytes = toBinary(CodeGeneratorResponseSchema, res);
let written = 0;
while (written < bytes.length) written += writeSync(1, bytes, written);
