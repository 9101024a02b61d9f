// The bare baselines of `npm run bench -- status`, run as a child process like the service: the same primary-key
// read of platform_settings on a plain pg pool, answered with no framework. BARE=http1 serves REST (GET, JSON),
// Connect-style JSON POSTs and gRPC-Web frames over node:http; BARE=http2 serves gRPC over h2c with node:http2.
import http from "node:http";
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { status } from "./status-read.ts";
import { GetStatusRequestSchema, GetStatusResponseSchema } from "../gen/hotelops/status/v1/status_pb.js";

/** One length-prefixed gRPC message frame (flag 0). */
function frame(message: Uint8Array, flag = 0): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  out[0] = flag;
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
}

function readBody(req: http.IncomingMessage | http2.ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

const port = Number(process.env.PORT);
if (process.env.BARE === "http2") {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    readBody(stream)
      .then(async (body) => {
        fromBinary(GetStatusRequestSchema, body.subarray(5));
        const message = toBinary(GetStatusResponseSchema, create(GetStatusResponseSchema, await status()));
        stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
        stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(frame(message));
      })
      .catch(() => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
} else {
  const server = http.createServer((req, res) => {
    readBody(req)
      .then(async (body) => {
        const type = req.headers["content-type"] ?? "";
        if (type.startsWith("application/grpc-web")) {
          fromBinary(GetStatusRequestSchema, body.subarray(5));
          const message = toBinary(GetStatusResponseSchema, create(GetStatusResponseSchema, await status()));
          const out = Buffer.concat([frame(message), frame(Buffer.from("grpc-status: 0\r\n"), 0x80)]);
          res.writeHead(200, { "content-type": "application/grpc-web+proto", "content-length": out.byteLength });
          res.end(out);
          return;
        }
        if (req.method === "POST") JSON.parse(body.toString() || "{}");
        const text = JSON.stringify(await status());
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
      })
      .catch(() => {
        res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
}
console.log("bare ready");
