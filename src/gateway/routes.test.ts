import { describe, expect, it } from "vitest";
import { GatewayTestService } from "../../test/gen/hotelops/gatewaytest/v1/gateway_test_pb.js";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { matchRoute, routeMatcher, routesOf, type Route } from "./routes.ts";
import { parseTemplate } from "./template.ts";

const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/** Every answer of the matcher next to a scan of the whole table. */
function expectSameAnswers(routes: Route[], paths: string[]): void {
  const match = routeMatcher(routes);
  for (const path of paths)
    for (const method of methods)
      expect(match(method, path), `${method} ${path}`).toEqual(matchRoute(routes, method, path));
}

describe("routeMatcher", () => {
  const routes = routesOf(
    [GatewayTestService, StatusService, ConnectivityService].flatMap((s) => s.methods.map((method) => ({ method }))),
  );

  it("answers every path as a scan of the whole table does", () => {
    const literal = routes.map((r) => r.template.source).filter((p) => !p.includes("{") && !p.includes(":"));
    expect(literal.length).toBeGreaterThan(3);
    const others = routes.map((r) => r.template.source.replace(/\{[^}]*\}/g, "x1"));
    expectSameAnswers(routes, [...literal, ...others, "/", "/nowhere", "/api/v1/status/", "/api/v1/status/x"]);
  });

  it("keeps table order when a pattern before a literal template matches the same path", () => {
    const [first, second] = routes;
    const table: Route[] = [
      { ...first!, httpMethod: "GET", template: parseTemplate("/v1/things/{id}") },
      { ...second!, httpMethod: "GET", template: parseTemplate("/v1/things/mine") },
      { ...second!, httpMethod: "POST", template: parseTemplate("/v1/things/mine") },
    ];
    const match = routeMatcher(table);
    expect(match("GET", "/v1/things/mine")).toMatchObject({ route: table[0], vars: new Map([["id", "mine"]]) });
    expect(match("POST", "/v1/things/mine")).toMatchObject({ route: table[2] });
    expect(match("DELETE", "/v1/things/mine")).toEqual({ allow: ["GET", "POST"] });
    expectSameAnswers(table, ["/v1/things/mine", "/v1/things/other", "/v1/things"]);
  });
});
