import { describe, expect, it } from "vitest";
import { CallHeaders } from "./headers.ts";

/** Runs the same steps on the global Headers and on CallHeaders; every read must agree. */
function both(steps: (h: Headers) => void): { global: Headers; ours: Headers } {
  const global = new Headers();
  const ours = new CallHeaders();
  steps(global);
  steps(ours);
  return { global, ours };
}

describe("CallHeaders", () => {
  it("reads, iterates and joins like the global Headers", () => {
    const { global, ours } = both((h) => {
      h.append("X-B", " two ");
      h.append("x-b", "three");
      h.set("Content-Type", "application/json");
      h.append("set-cookie", "a=1");
      h.append("Set-Cookie", "b=2");
      h.append("a-first", "1");
      h.set("gone", "x");
      h.delete("GONE");
    });
    expect([...ours]).toEqual([...global]);
    expect([...ours.keys()]).toEqual([...global.keys()]);
    expect([...ours.values()]).toEqual([...global.values()]);
    for (const name of ["x-b", "X-B", "content-type", "set-cookie", "gone", "missing"]) {
      expect(ours.get(name)).toBe(global.get(name));
      expect(ours.has(name)).toBe(global.has(name));
    }
    expect(ours.getSetCookie()).toEqual(global.getSetCookie());
    const seen: string[] = [];
    ours.forEach((value, name) => seen.push(`${name}=${value}`));
    const expected: string[] = [];
    global.forEach((value, name) => expected.push(`${name}=${value}`));
    expect(seen).toEqual(expected);
  });

  it("takes a record, pairs or another Headers, and a Node request's headers", () => {
    const init = { "Content-Type": "text/plain", "x-a": "1" };
    expect([...new CallHeaders(init)]).toEqual([...new Headers(init)]);
    expect([...new CallHeaders(Object.entries(init))]).toEqual([...new Headers(Object.entries(init))]);
    expect([...new CallHeaders(new Headers(init))]).toEqual([...new Headers(init)]);
    const node = CallHeaders.fromNode({ ":path": "/x", host: "h", "set-cookie": ["a=1", "b=2"], "x-a": "1" });
    expect([...node]).toEqual([
      ["host", "h"],
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
      ["x-a", "1"],
    ]);
  });

  it("refuses what the global Headers refuses", () => {
    for (const [name, value] of [
      ["bad name", "v"],
      ["", "v"],
      ["x-a", "line\nbreak"],
      ["x-a", "nul\0"],
    ] as const) {
      expect(() => new Headers().set(name, value)).toThrow(TypeError);
      expect(() => new CallHeaders().set(name, value)).toThrow(TypeError);
      expect(() => new CallHeaders().append(name, value)).toThrow(TypeError);
    }
  });
});
