import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { interceptorsOf, type HotelOpsClientOptions } from "./options.ts";

/** A Node transport for the service (reuse it for several clients to share connections). */
export function createHotelOpsTransport(opts: HotelOpsClientOptions): Transport {
  const interceptors = interceptorsOf(opts);
  const common = {
    baseUrl: opts.baseUrl,
    interceptors,
    ...(opts.defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: opts.defaultTimeoutMs }),
  };
  switch (opts.transport ?? "connect") {
    case "grpc":
      return createGrpcTransport(common);
    case "grpc-web":
      return opts.httpVersion === "2"
        ? createGrpcWebTransport({ ...common, httpVersion: "2" })
        : createGrpcWebTransport({ ...common, httpVersion: "1.1" });
    case "connect": {
      const useBinaryFormat = opts.useJson !== true;
      return opts.httpVersion === "2"
        ? createConnectTransport({ ...common, useBinaryFormat, httpVersion: "2" })
        : createConnectTransport({ ...common, useBinaryFormat, httpVersion: "1.1" });
    }
  }
}

/**
 * A typed client of one service (every RPC of its descriptor is a method):
 * `createHotelOpsClient(StatusService, { baseUrl, transport: "grpc" }).getStatus({})`.
 */
export function createHotelOpsClient<S extends DescService>(service: S, opts: HotelOpsClientOptions): Client<S> {
  return createClient(service, createHotelOpsTransport(opts));
}
