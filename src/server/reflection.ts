import { readFileSync } from "node:fs";
import { create, fromBinary, toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, SourceCodeInfoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";

/**
 * gRPC server reflection (v1 and v1alpha) over Connect, so grpcurl-style tools work without .proto files.
 * Answers from the descriptors of the services the router serves, with their transitive imports, and with the
 * comments of proto/ (gen/source_info.json, written by `npm run generate`) so clients can show the docs.
 */
export function registerReflection(router: ConnectRouter, services: readonly DescService[]): void {
  const sourceInfo = JSON.parse(readFileSync(new URL("../../gen/source_info.json", import.meta.url), "utf8")) as Record<
    string,
    string
  >;
  const all = [...services, v1.ServerReflection, v1alpha.ServerReflection, Health];
  const files = new Map<string, DescFile>();
  const addFile = (f: DescFile): void => {
    if (files.has(f.name + ".proto")) return;
    files.set(f.name + ".proto", f);
    f.dependencies.forEach(addFile);
  };
  all.forEach((s) => addFile(s.file));
  const symbols = new Map<string, DescFile>();
  for (const f of files.values()) {
    for (const s of f.services) {
      symbols.set(s.typeName, f);
      for (const m of s.methods) symbols.set(`${s.typeName}.${m.name}`, f);
    }
    for (const m of f.messages) symbols.set(m.typeName, f);
    for (const e of f.enums) symbols.set(e.typeName, f);
    for (const x of f.extensions) symbols.set(x.typeName, f);
  }
  const encoded = new Map<string, Uint8Array>();
  const encode = (f: DescFile): Uint8Array => {
    let bytes = encoded.get(f.name);
    if (bytes === undefined) {
      const info = sourceInfo[`${f.name}.proto`];
      const proto =
        info === undefined
          ? f.proto
          : create(FileDescriptorProtoSchema, {
              ...f.proto,
              sourceCodeInfo: fromBinary(SourceCodeInfoSchema, Buffer.from(info, "base64")),
            });
      encoded.set(f.name, (bytes = toBinary(FileDescriptorProtoSchema, proto)));
    }
    return bytes;
  };
  const withDeps = (f: DescFile): Uint8Array[] => {
    const seen = new Set<DescFile>();
    const walk = (x: DescFile): void => {
      if (seen.has(x)) return;
      seen.add(x);
      x.dependencies.forEach(walk);
    };
    walk(f);
    return [...seen].map(encode);
  };

  type Request = v1.ServerReflectionRequest;
  type Response = Omit<v1.ServerReflectionResponse, "$typeName" | "originalRequest"> & { originalRequest: Request };
  const answer = (req: Request): Response => {
    const base = { validHost: req.host, originalRequest: req };
    const notFound = (what: string): Response => ({
      ...base,
      messageResponse: {
        case: "errorResponse",
        value: { $typeName: "grpc.reflection.v1.ErrorResponse", errorCode: 5, errorMessage: `${what} not found` },
      },
    });
    const filesOf = (f: DescFile | undefined, what: string): Response =>
      f === undefined
        ? notFound(what)
        : {
            ...base,
            messageResponse: {
              case: "fileDescriptorResponse",
              value: { $typeName: "grpc.reflection.v1.FileDescriptorResponse", fileDescriptorProto: withDeps(f) },
            },
          };
    const m = req.messageRequest;
    switch (m.case) {
      case "listServices":
        return {
          ...base,
          messageResponse: {
            case: "listServicesResponse",
            value: {
              $typeName: "grpc.reflection.v1.ListServiceResponse",
              service: all.map((s) => ({ $typeName: "grpc.reflection.v1.ServiceResponse", name: s.typeName })),
            },
          },
        };
      case "fileByFilename":
        return filesOf(files.get(m.value), `file ${m.value}`);
      case "fileContainingSymbol":
        return filesOf(symbols.get(m.value.replace(/^\./, "")), `symbol ${m.value}`);
      case "fileContainingExtension": {
        const f = [...files.values()].find((x) =>
          x.extensions.some(
            (e) => e.extendee.typeName === m.value.containingType && e.number === m.value.extensionNumber,
          ),
        );
        return filesOf(f, "extension");
      }
      case "allExtensionNumbersOfType": {
        const numbers = [...files.values()].flatMap((x) =>
          x.extensions.filter((e) => e.extendee.typeName === m.value).map((e) => e.number),
        );
        return {
          ...base,
          messageResponse: {
            case: "allExtensionNumbersResponse",
            value: {
              $typeName: "grpc.reflection.v1.ExtensionNumberResponse",
              baseTypeName: m.value,
              extensionNumber: numbers,
            },
          },
        };
      }
      default:
        return {
          ...base,
          messageResponse: {
            case: "errorResponse",
            value: { $typeName: "grpc.reflection.v1.ErrorResponse", errorCode: 3, errorMessage: "empty request" },
          },
        };
    }
  };

  // v1alpha has the same shapes under another package name; the binary encoding is identical.
  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield answer(req) as v1.ServerReflectionResponse;
    },
  });
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const req of requests)
        yield answer(req as unknown as Request) as unknown as v1alpha.ServerReflectionResponse;
    },
  });
}
