// The peers a user would otherwise pick, serving the status read of `npm run bench -- status` from the same
// database (the same primary-key read on a plain pg pool), each as a child process like the service:
// PEER=fastify: Fastify 5 + pg (REST GET /api/v1/status);
// PEER=connect-node: a plain connect-node router on node:http (Connect POST, JSON and proto), no framework of ours;
// PEER=grpc-js: a @grpc/grpc-js server (gRPC over h2c).
import http from "node:http";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import Fastify from "fastify";
import { status } from "./status-read.ts";
import { GetStatusRequestSchema, GetStatusResponseSchema, StatusService } from "../gen/hotelops/status/v1/status_pb.js";

const port = Number(process.env.PORT);
switch (process.env.PEER) {
  case "fastify": {
    const app = Fastify({ logger: false });
    app.get("/api/v1/status", status);
    await app.listen({ port, host: "127.0.0.1" });
    break;
  }
  case "connect-node": {
    const server = http.createServer(
      connectNodeAdapter({ routes: (r) => r.service(StatusService, { getStatus: status }) }),
    );
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    break;
  }
  case "grpc-js": {
    const server = new grpc.Server();
    server.addService(
      {
        getStatus: {
          path: "/hotelops.status.v1.StatusService/GetStatus",
          requestStream: false,
          responseStream: false,
          requestSerialize: (m: Uint8Array) => Buffer.from(m),
          requestDeserialize: (b: Buffer) => fromBinary(GetStatusRequestSchema, b),
          responseSerialize: (m: Awaited<ReturnType<typeof status>>) =>
            Buffer.from(toBinary(GetStatusResponseSchema, create(GetStatusResponseSchema, m))),
          responseDeserialize: (b: Buffer) => b,
        },
      },
      {
        getStatus: (_call: unknown, callback: grpc.sendUnaryData<Awaited<ReturnType<typeof status>>>) => {
          status().then(
            (s) => callback(null, s),
            (err: Error) => callback({ code: grpc.status.INTERNAL, details: err.message }),
          );
        },
      },
    );
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    break;
  }
  default:
    throw new Error(`PEER must be fastify, connect-node or grpc-js, got ${process.env.PEER}`);
}
process.stdout.write("bare ready\n"); // the readiness line bench/harness.ts waits for
