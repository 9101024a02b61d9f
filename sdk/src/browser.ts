// @hotelops/sdk for browsers and other fetch runtimes: Connect and gRPC-Web clients, session and token helpers.
export * from "./common.ts";
export { createHotelOpsClient, createHotelOpsTransport } from "./browser-client.ts";
