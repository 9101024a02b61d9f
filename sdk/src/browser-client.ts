import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { interceptorsOf, type HotelOpsClientOptions } from "./options.ts";

/** A fetch-based transport (browsers, React Native, Deno, Node): Connect or gRPC-Web. */
export function createHotelOpsTransport(opts: HotelOpsClientOptions): Transport {
  const interceptors = interceptorsOf(opts);
  const common = {
    baseUrl: opts.baseUrl,
    interceptors,
    ...(opts.defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: opts.defaultTimeoutMs }),
  };
  switch (opts.transport ?? "connect") {
    case "grpc":
      throw new Error(
        'transport "grpc" needs HTTP/2 trailers, which fetch cannot read; use "connect" or "grpc-web" in the browser',
      );
    case "grpc-web":
      return createGrpcWebTransport(common);
    case "connect":
      return createConnectTransport({ ...common, useBinaryFormat: opts.useJson !== true });
  }
}

export function createHotelOpsClient<S extends DescService>(service: S, opts: HotelOpsClientOptions): Client<S> {
  return createClient(service, createHotelOpsTransport(opts));
}
