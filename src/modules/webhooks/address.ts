import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/** One DNS answer. */
interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (injectable so tests can play hostile DNS). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Why an address is refused; `reason` is safe to show to the panel user. */
export class AddressRejected extends Error {
  override name = "AddressRejected";
}

export interface AddressPolicy {
  /** Test-only (WEBHOOK_ALLOW_PRIVATE_TARGETS): loopback and private ranges are allowed. */
  allowPrivate: boolean;
}

/** A URL that passed the syntax rules: https, no userinfo, no fragment, port 443 or >= 1024. */
export interface CheckedUrl {
  url: URL;
  /** Host name without IPv6 brackets. */
  host: string;
  port: number;
  /** Set when the host is a literal IP (in any notation the URL parser accepts). */
  literalIp: string | undefined;
}

const maxUrlLength = 2048;

/** Syntax rules of the spec's "Address rules" (1, 2); no DNS. */
export function checkUrlSyntax(raw: string): CheckedUrl {
  if (raw.length > maxUrlLength) throw new AddressRejected(`the address is longer than ${maxUrlLength} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AddressRejected("not a valid absolute URL");
  }
  if (url.protocol !== "https:") throw new AddressRejected("the scheme must be https");
  if (url.username !== "" || url.password !== "")
    throw new AddressRejected("user name and password are not allowed in the address");
  // `new URL` drops an empty fragment ("https://x/#"), so look at the raw text too.
  if (url.hash !== "" || raw.includes("#")) throw new AddressRejected("a #fragment is not allowed in the address");
  const port = url.port === "" ? 443 : Number(url.port);
  if (port !== 443 && port < 1024) throw new AddressRejected("the port must be 443 or 1024 and above");
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (host === "") throw new AddressRejected("the address has no host");
  // The WHATWG parser already turned decimal (2130706433), octal (0177.0.0.1), hex (0x7f.1) and short
  // (127.1) IPv4 forms into dotted quads, so one parse covers every notation.
  const literalIp = ipaddr.isValid(host) ? ipaddr.parse(host).toString() : undefined;
  if (literalIp === undefined && !/^[a-z0-9._-]+$/i.test(host)) throw new AddressRejected("the host name is not valid");
  return { url, host, port, literalIp };
}

/**
 * Whether a connection to this IP is allowed. Only globally routable unicast passes: private, loopback,
 * link-local (incl. 169.254.169.254 metadata), CGNAT, multicast, unspecified, broadcast, documentation,
 * benchmarking and reserved ranges are refused; IPv6 forms that embed an IPv4 address (IPv4-mapped,
 * IPv4-compatible, NAT64 64:ff9b::/96, 6to4) are judged by the embedded address.
 */
export function ipVerdict(ip: string, policy: AddressPolicy): { ok: true } | { ok: false; range: string } {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return { ok: false, range: "invalid" };
  }
  if (addr.kind() === "ipv6") {
    const v6 = addr as ipaddr.IPv6;
    if (v6.zoneId !== undefined) return { ok: false, range: "scoped" };
    const embedded = embeddedIpv4(v6);
    if (embedded !== undefined) {
      const inner = ipVerdict(embedded.toString(), policy);
      return inner.ok ? inner : { ok: false, range: `${v6.range()}:${inner.range}` };
    }
    const range = v6.range();
    if (range === "unicast") return { ok: true };
    if (policy.allowPrivate && (range === "loopback" || range === "uniqueLocal")) return { ok: true };
    return { ok: false, range };
  }
  const range = (addr as ipaddr.IPv4).range();
  if (range === "unicast") return { ok: true };
  if (policy.allowPrivate && (range === "loopback" || range === "private")) return { ok: true };
  return { ok: false, range };
}

const ipv4Compatible = ipaddr.IPv6.parseCIDR("::/96");
const nat64WellKnown = ipaddr.IPv6.parseCIDR("64:ff9b::/96");
const sixToFour = ipaddr.IPv6.parseCIDR("2002::/16");

function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = v6.parts;
  const low32 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (v6.isIPv4MappedAddress() || v6.range() === "rfc6145") return low32(p[6]!, p[7]!);
  if (v6.match(nat64WellKnown)) return low32(p[6]!, p[7]!);
  // ::/96 without :: and ::1 (their own ranges) is the deprecated IPv4-compatible form.
  if (v6.match(ipv4Compatible) && v6.range() !== "unspecified" && v6.range() !== "loopback") return low32(p[6]!, p[7]!);
  if (v6.match(sixToFour)) return low32(p[1]!, p[2]!);
  return undefined;
}

/** A URL that passed every rule, with the IP the connection must go to. */
export interface VerifiedTarget extends CheckedUrl {
  ip: string;
  family: 4 | 6;
}

/**
 * The full rule set: syntax, then DNS; refused when ANY resolved address is not allowed (a host with one
 * public and one private answer is refused). The returned IP is the one to connect to.
 */
export async function verifyTarget(raw: string, policy: AddressPolicy, resolve: Resolver): Promise<VerifiedTarget> {
  const checked = checkUrlSyntax(raw);
  let answers: ResolvedAddress[];
  if (checked.literalIp !== undefined) {
    answers = [{ address: checked.literalIp, family: ipaddr.parse(checked.literalIp).kind() === "ipv6" ? 6 : 4 }];
  } else {
    try {
      answers = await resolve(checked.host);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new AddressRejected(`the host name does not resolve${typeof code === "string" ? ` (${code})` : ""}`);
    }
    if (answers.length === 0) throw new AddressRejected("the host name does not resolve");
  }
  for (const a of answers) {
    const verdict = ipVerdict(a.address, policy);
    if (!verdict.ok) throw new AddressRejected(`the host resolves to a non-public address (${verdict.range})`);
  }
  const first = answers[0]!;
  return { ...checked, ip: ipaddr.parse(first.address).toString(), family: first.family };
}
