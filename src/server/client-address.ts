import ipaddr from "ipaddr.js";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses TRUSTED_PROXIES entries ("10.0.0.0/8", "127.0.0.1", "::1"); undefined for an entry that is neither. */
export function parseTrustedProxies(list: readonly string[]): Range[] | undefined {
  const ranges: Range[] = [];
  for (const entry of list) {
    if (ipaddr.isValidCIDR(entry)) ranges.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry)) {
      const ip = ipaddr.parse(entry);
      ranges.push([ip, ip.kind() === "ipv4" ? 32 : 128]);
    } else return undefined;
  }
  return ranges;
}

/** IPv4-mapped IPv6 ("::ffff:10.0.0.1", how dual-stack sockets report IPv4 peers) compares as IPv4. */
function normalized(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const ip = ipaddr.parse(address);
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

/**
 * The client's address for rate limits and logs. Behind trusted proxies (TRUSTED_PROXIES) it is the rightmost
 * X-Forwarded-For entry that is not a trusted proxy itself: entries left of it could be written by anyone. A
 * peer that is not a trusted proxy is the client, whatever X-Forwarded-For it sends.
 */
export function createClientAddress(
  trusted: readonly Range[],
): (peer: string, forwardedFor: string | string[] | undefined) => string {
  const isTrusted = (address: string): boolean => {
    const ip = normalized(address);
    return ip !== undefined && trusted.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
  };
  return (peer, forwardedFor) => {
    if (trusted.length === 0 || forwardedFor === undefined || !isTrusted(peer)) return peer;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
      .split(",")
      .map((h) => h.trim())
      .filter((h) => h !== "");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (normalized(hop) === undefined) return peer; // a malformed chain: trust none of it
      if (!isTrusted(hop)) return normalized(hop)!.toString();
    }
    return hops.length > 0 ? normalized(hops[0]!)!.toString() : peer;
  };
}
