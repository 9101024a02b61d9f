import { describe, expect, it } from "vitest";
import { matchTemplate, parseTemplate } from "./template.ts";

const match = (template: string, path: string) => {
  const vars = matchTemplate(parseTemplate(template), path);
  return vars === undefined ? undefined : Object.fromEntries(vars);
};

describe("parseTemplate", () => {
  it("lists the bound field paths, nested ones included", () => {
    expect(parseTemplate("/v1/properties/{property_code}/reservations/{reservation.id}").fields).toEqual([
      "property_code",
      "reservation.id",
    ]);
    expect(parseTemplate("/v1/{name=shelves/*/books/*}:publish")).toMatchObject({ fields: ["name"], verb: "publish" });
    expect(parseTemplate("/v1/things").fields).toEqual([]);
  });

  it("refuses templates that could never match", () => {
    expect(() => parseTemplate("v1/things")).toThrow(/start with/);
    expect(() => parseTemplate("/v1/{path=**}/tail")).toThrow(/last segment/);
    expect(() => parseTemplate("/v1/**/{id}")).toThrow(/last segment/);
  });
});

describe("matchTemplate", () => {
  it("matches literal segments exactly", () => {
    expect(match("/v1/status", "/v1/status")).toEqual({});
    expect(match("/v1/status", "/v1/statuses")).toBeUndefined();
    expect(match("/v1/status", "/v1/status/x")).toBeUndefined();
    expect(match("/v1/status", "/v1")).toBeUndefined();
    expect(match("/v1/status", "/v1/status/")).toBeUndefined();
    expect(match("/v1/status", "/v1//status")).toBeUndefined();
    expect(match("/v1/status:check", "/v1/status:check")).toEqual({});
    expect(match("/v1/status:check", "/v1/status")).toBeUndefined();
    expect(match("/v1/{name=shelves/books}", "/v1/shelves/books")).toEqual({ name: "shelves/books" });
  });

  it("binds single-segment variables, nested field paths and percent-decodes them", () => {
    expect(
      match(
        "/v1/properties/{property_code}/reservations/{reservation.id}",
        "/v1/properties/DEMO-IST/reservations/r%2F1%20x",
      ),
    ).toEqual({
      property_code: "DEMO-IST",
      "reservation.id": "r/1 x",
    });
  });

  it("does not bind an empty segment (trailing or double slash)", () => {
    expect(match("/v1/things/{id}", "/v1/things/")).toBeUndefined();
    expect(match("/v1/things/{id}/parts", "/v1/things//parts")).toBeUndefined();
  });

  it("binds {var=pattern} with literal and wildcard segments", () => {
    expect(match("/v1/{name=shelves/*}/books/{book}", "/v1/shelves/s1/books/b2")).toEqual({
      name: "shelves/s1",
      book: "b2",
    });
    expect(match("/v1/{name=shelves/*}/books/{book}", "/v1/racks/s1/books/b2")).toBeUndefined();
    expect(match("/v1/{name=*}", "/v1/x")).toEqual({ name: "x" });
  });

  it("binds {var=**} to the rest of the path, possibly empty", () => {
    expect(match("/files/{path=**}", "/files/a/b/c.txt")).toEqual({ path: "a/b/c.txt" });
    expect(match("/files/{path=**}", "/files/a%2Fb/c")).toEqual({ path: "a/b/c" });
    expect(match("/files/{path=**}", "/files")).toEqual({ path: "" });
    expect(match("/files/{path=docs/**}", "/files/docs/x/y")).toEqual({ path: "docs/x/y" });
    expect(match("/files/{path=docs/**}", "/files/img/x")).toBeUndefined();
  });

  it("matches bare * and ** without binding them", () => {
    expect(match("/v1/*/things/{id}", "/v1/anything/things/7")).toEqual({ id: "7" });
    expect(match("/static/**", "/static/a/b")).toEqual({});
  });

  it("requires the custom verb when the template has one", () => {
    expect(match("/v1/things/{id}:publish", "/v1/things/t1:publish")).toEqual({ id: "t1" });
    expect(match("/v1/things/{id}:publish", "/v1/things/t1")).toBeUndefined();
    expect(match("/v1/things/{id}:publish", "/v1/things/t1:archive")).toBeUndefined();
    expect(match("/v1/things:batchGet", "/v1/things:batchGet")).toEqual({});
  });

  it("refuses malformed percent-encoding instead of throwing", () => {
    expect(match("/v1/things/{id}", "/v1/things/%E0%A4%A")).toBeUndefined();
  });

  it("gives the same answer on repeated use of one parsed template", () => {
    const t = parseTemplate("/v1/{a}/{b=x/**}");
    for (let i = 0; i < 3; i++)
      expect(Object.fromEntries(matchTemplate(t, `/v1/${i}/x/y`)!)).toEqual({ a: String(i), b: "x/y" });
  });
});
