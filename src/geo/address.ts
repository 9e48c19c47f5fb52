/** Address parsing for the lookups: IPv6 text as a 128-bit number. */
import { isIPv6 } from "node:net";

/** An IPv6 address (`::`, embedded IPv4 and zone ids allowed) as a bigint; null if it is none. */
export function ipv6Of(text: string): bigint | null {
  const s = text.includes("%") ? text.slice(0, text.indexOf("%")) : text;
  if (!isIPv6(s)) return null;
  let groups: number[] = [];
  const parse = (part: string): number[] => {
    if (part === "") return [];
    const out: number[] = [];
    for (const g of part.split(":")) {
      if (g.includes(".")) {
        const q = g.split(".").map(Number);
        out.push((q[0]! << 8) | q[1]!, (q[2]! << 8) | q[3]!);
      } else out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const gap = s.indexOf("::");
  if (gap < 0) groups = parse(s);
  else {
    const head = parse(s.slice(0, gap));
    const tail = parse(s.slice(gap + 2));
    groups = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  }
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  return v;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`), or null. */
export function mappedIpv4(text: string): string | null {
  const m = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i.exec(text);
  return m ? m[1]! : null;
}
