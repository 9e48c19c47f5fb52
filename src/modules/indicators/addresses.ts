/**
 * Which source addresses a blocklist may name (docs/threat-data.md). A firewall fed with
 * loopback, the LAN or a node's own address cuts off what it protects; documentation ranges
 * in a list are test data; and the source address is the honeypot's text, so anything that is
 * not an address would break an `ipset restore` or `pfctl -T replace` of the whole list.
 */
import { BlockList, isIP } from "node:net";

/** Ranges that are not one attacker on the Internet (RFC 6890 and the IANA special-purpose registries). */
export const SPECIAL_RANGES: readonly string[] = [
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // private
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation (TEST-NET-1)
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation (TEST-NET-2)
  "203.0.113.0/24", // documentation (TEST-NET-3)
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, and the broadcast address
  "::/96", // unspecified, loopback, IPv4-compatible (deprecated)
  "fc00::/7", // unique local
  "fe80::/10", // link-local
  "ff00::/8", // multicast
  "2001:db8::/32", // documentation
  "3fff::/20", // documentation (RFC 9637)
];

const special = new BlockList();
for (const range of SPECIAL_RANGES) {
  const [net, bits] = range.split("/");
  special.addSubnet(net!, Number(bits), isIP(net!) === 6 ? "ipv6" : "ipv4");
}

/**
 * `public`: an address a firewall may block; `special`: in one of SPECIAL_RANGES (IPv4-mapped
 * IPv6 forms such as `::ffff:10.0.0.1` included); `invalid`: not an IP address at all.
 */
export function addressClass(text: string): "public" | "special" | "invalid" {
  // A zone (fe80::1%eth0) only ever follows a link-local address.
  const ip = text.includes("%") ? text.slice(0, text.indexOf("%")) : text;
  const family = isIP(ip);
  if (family === 0) return "invalid";
  return special.check(ip, family === 6 ? "ipv6" : "ipv4") ? "special" : "public";
}

/** The form addresses are compared in: lower case, no zone, an IPv4-mapped address as IPv4. */
export function addressKey(ip: string): string {
  const s = ip.toLowerCase().replace(/%.*$/, "");
  if (isIP(s) !== 6) return s;
  // The URL parser writes IPv6 in its canonical form (RFC 5952): 2001:0DB8:0::1 is 2001:db8::1.
  const canonical = new URL(`http://[${s}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const [hi, lo] = [Number.parseInt(mapped[1]!, 16), Number.parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * Which addresses go on a blocklist: public ones, or with `includePrivate` special ones too;
 * never one of `excluded` (the nodes' addresses) or text that is not an address.
 */
export function blocklistFilter(opts: { includePrivate: boolean; excluded: Iterable<string> }): (ip: string) => boolean {
  const excluded = new Set([...opts.excluded].map(addressKey));
  return (ip) => {
    const c = addressClass(ip);
    return c !== "invalid" && (c === "public" || opts.includePrivate) && !excluded.has(addressKey(ip));
  };
}

/**
 * The `limit` most active addresses that `keep` takes. `read(n)` gives the n most active of
 * all; it is asked for a few more than `limit`, and for more again only when so many were
 * left out that the first read fell short.
 */
export async function mostActive(read: (n: number) => string[] | Promise<string[]>, limit: number, keep: (ip: string) => boolean): Promise<string[]> {
  for (let n = limit + 64; ; n *= 4) {
    const all = await read(n);
    const kept = all.filter(keep);
    if (kept.length >= limit || all.length < n) return kept.slice(0, limit);
  }
}
