import { describe, expect, it } from "vitest";
import { createClientAddress, parseTrustedProxies } from "./client-address.ts";

describe("client address behind trusted proxies", () => {
  const clientOf = createClientAddress(parseTrustedProxies(["10.0.0.0/8", "::1"])!);

  it("takes the rightmost untrusted X-Forwarded-For hop when the peer is a trusted proxy", () => {
    expect(clientOf("10.1.2.3", "203.0.113.7")).toBe("203.0.113.7");
    expect(clientOf("::ffff:10.1.2.3", "198.51.100.1, 203.0.113.7, 10.9.9.9")).toBe("203.0.113.7");
    expect(clientOf("::1", ["198.51.100.1", "203.0.113.7"])).toBe("203.0.113.7");
    expect(clientOf("10.1.2.3", "10.0.0.5, 10.0.0.6")).toBe("10.0.0.5");
  });

  it("ignores X-Forwarded-For from anyone else, and a malformed chain", () => {
    expect(clientOf("203.0.113.9", "1.2.3.4")).toBe("203.0.113.9");
    expect(clientOf("10.1.2.3", "1.2.3.4, not-an-ip")).toBe("10.1.2.3");
    expect(clientOf("10.1.2.3", undefined)).toBe("10.1.2.3");
    expect(createClientAddress([])("10.1.2.3", "1.2.3.4")).toBe("10.1.2.3");
  });

  it("refuses entries that are not addresses or ranges", () => {
    expect(parseTrustedProxies(["10.0.0.0/8", "proxy.local"])).toBeUndefined();
    expect(parseTrustedProxies(["192.168.1.1", "fd00::/8"])).toHaveLength(2);
  });
});
