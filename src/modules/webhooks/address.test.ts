import { describe, expect, it } from "vitest";
import { AddressRejected, checkUrlSyntax, ipVerdict, verifyTarget, type Resolver } from "./address.ts";

const strict = { allowPrivate: false };
const lenient = { allowPrivate: true };
const publicDns: Resolver = async () => [{ address: "93.184.216.34", family: 4 }];
const dnsOf =
  (...answers: string[]): Resolver =>
  async () =>
    answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

describe("URL syntax", () => {
  it.each([
    ["http://example.com/hook", "scheme"],
    ["ftp://example.com/hook", "scheme"],
    ["https://user:pw@example.com/hook", "user name"],
    ["https://user@example.com/hook", "user name"],
    ["https://example.com/hook#frag", "fragment"],
    ["https://example.com/hook#", "fragment"],
    ["https://example.com:80/hook", "port"],
    ["https://example.com:1023/hook", "port"],
    ["https://example.com:22/hook", "port"],
    ["not a url", "valid"],
    ["https://exa mple.com/", "valid"],
    [`https://example.com/${"a".repeat(2100)}`, "longer"],
  ])("refuses %s", (url, reason) => {
    expect(() => checkUrlSyntax(url)).toThrow(AddressRejected);
    expect(() => checkUrlSyntax(url)).toThrow(new RegExp(reason));
  });

  it.each([
    "https://example.com/hook",
    "https://example.com:443/x?y=1",
    "https://example.com:1024/",
    "https://example.com:65535/",
    "https://EXAMPLE.com/",
  ])("accepts %s", (url) => {
    expect(() => checkUrlSyntax(url)).not.toThrow();
  });

  it.each([
    ["https://2130706433/", "127.0.0.1"],
    ["https://0177.0.0.1/", "127.0.0.1"],
    ["https://0x7f.0.0.1/", "127.0.0.1"],
    ["https://0x7f000001/", "127.0.0.1"],
    ["https://127.1/", "127.0.0.1"],
    ["https://017700000001/", "127.0.0.1"],
    ["https://[::1]/", "::1"],
    ["https://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
    ["https://[0:0:0:0:0:0:0:1]:8443/", "::1"],
  ])("reads literal IP %s in any notation", (url, ip) => {
    expect(checkUrlSyntax(url).literalIp).toBe(ip);
  });
});

describe("IP ranges", () => {
  it.each([
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "169.254.0.1",
    "100.64.0.1",
    "100.127.255.254",
    "224.0.0.1",
    "239.255.255.250",
    "0.0.0.0",
    "0.1.2.3",
    "255.255.255.255",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.9",
    "198.18.0.1",
    "240.0.0.1",
    "192.0.0.8",
    "::",
    "::1",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456::1",
    "ff02::1",
    "2001:db8::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "::10.0.0.1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::10.1.1.1",
    "64:ff9b:1::1",
    "2002:7f00:1::1",
    "2002:a00:1::",
    "2001::1",
    "fec0::1",
    "not-an-ip",
  ])("refuses %s", (ip) => {
    expect(ipVerdict(ip, strict).ok).toBe(false);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
  ])("accepts public %s", (ip) => {
    expect(ipVerdict(ip, strict).ok).toBe(true);
  });

  it("WEBHOOK_ALLOW_PRIVATE_TARGETS opens loopback and private ranges, never metadata or link-local", () => {
    expect(ipVerdict("127.0.0.1", lenient).ok).toBe(true);
    expect(ipVerdict("10.1.2.3", lenient).ok).toBe(true);
    expect(ipVerdict("::1", lenient).ok).toBe(true);
    expect(ipVerdict("169.254.169.254", lenient).ok).toBe(false);
    expect(ipVerdict("fe80::1", lenient).ok).toBe(false);
    expect(ipVerdict("0.0.0.0", lenient).ok).toBe(false);
    expect(ipVerdict("224.0.0.1", lenient).ok).toBe(false);
  });
});

describe("full check with DNS", () => {
  it.each([
    "https://2130706433/hook",
    "https://0177.0.0.1/hook",
    "https://0x7f.1/hook",
    "https://[::1]/hook",
    "https://[::ffff:7f00:1]/hook",
    "https://[64:ff9b::a9fe:a9fe]/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[fe80::1]/",
    "https://100.64.0.1/",
    "https://10.0.0.1:8443/",
    "https://0.0.0.0/",
  ])("refuses literal %s without asking DNS", async (url) => {
    let asked = false;
    await expect(verifyTarget(url, strict, async () => ((asked = true), []))).rejects.toThrow(AddressRejected);
    expect(asked).toBe(false);
  });

  it.each([
    ["a private answer", dnsOf("10.0.0.5")],
    ["loopback", dnsOf("127.0.0.1")],
    ["metadata", dnsOf("169.254.169.254")],
    ["one public and one private answer", dnsOf("93.184.216.34", "10.0.0.5")],
    ["one private and one public answer", dnsOf("192.168.0.10", "93.184.216.34")],
    ["public IPv4 and loopback IPv6", dnsOf("93.184.216.34", "::1")],
    ["an IPv4-mapped loopback AAAA", dnsOf("::ffff:127.0.0.1")],
    ["a NAT64 of metadata", dnsOf("64:ff9b::169.254.169.254")],
    ["CGNAT", dnsOf("100.100.100.100")],
    ["no answer", dnsOf()],
    ["NXDOMAIN", (async () => Promise.reject(Object.assign(new Error("nx"), { code: "ENOTFOUND" }))) as Resolver],
  ])("refuses a host with %s", async (_name, resolver) => {
    await expect(verifyTarget("https://hooks.example.com/x", strict, resolver)).rejects.toThrow(AddressRejected);
  });

  it("accepts a host with only public answers and pins the first one", async () => {
    const t = await verifyTarget(
      "https://hooks.example.com:8443/in?x=1",
      strict,
      dnsOf("93.184.216.34", "2606:4700:4700::1111"),
    );
    expect(t).toMatchObject({ host: "hooks.example.com", port: 8443, ip: "93.184.216.34", family: 4 });
    await expect(verifyTarget("https://hooks.example.com/", strict, publicDns)).resolves.toMatchObject({
      ip: "93.184.216.34",
    });
  });
});
