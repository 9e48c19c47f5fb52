/**
 * The IP-to-ASN data that ships with Core (npm package `@ip-location-db/asn`: RouteViews, the
 * five RIRs' delegations and DB-IP's IP to ASN Lite, CC BY 4.0). That package publishes CSV
 * only (its MMDB sibling is not on the npm registry), so the ranges are read into sorted typed
 * arrays and searched by bisection: ~410,000 IPv4 ranges load in a fraction of a second and a
 * lookup is a few hundred nanoseconds. IPv6 ranges load on the first IPv6 lookup.
 */
import { readFileSync } from "node:fs";
import { ipv6Of } from "./address";

export interface AsnRecord {
  asn: number;
  org: string | null;
}

/** Splits a CSV line of the package's form: `start,end,asn,org` with the org maybe quoted. */
function fields(line: string): [string, string, string, string] | null {
  const a = line.indexOf(",");
  const b = line.indexOf(",", a + 1);
  const c = line.indexOf(",", b + 1);
  if (a < 0 || b < 0 || c < 0) return null;
  let org = line.slice(c + 1);
  if (org.startsWith('"') && org.endsWith('"')) org = org.slice(1, -1).replaceAll('""', '"');
  return [line.slice(0, a), line.slice(a + 1, b), line.slice(b + 1, c), org];
}

class Orgs {
  readonly names: (string | null)[] = [null];
  private readonly ids = new Map<string, number>();
  id(name: string): number {
    if (name === "") return 0;
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.ids.set(name, id);
    }
    return id;
  }
}

export class AsnTable {
  private readonly orgs = new Orgs();
  private readonly v4Start: Uint32Array;
  private readonly v4End: Uint32Array;
  private readonly v4Asn: Uint32Array;
  private readonly v4Org: Uint32Array;
  private v6: { start: bigint[]; end: bigint[]; asn: Uint32Array; org: Uint32Array } | null = null;

  constructor(private readonly dir: string) {
    const lines = readFileSync(`${dir}/asn-ipv4-num.csv`, "latin1").split("\n");
    const n = lines.length;
    this.v4Start = new Uint32Array(n);
    this.v4End = new Uint32Array(n);
    this.v4Asn = new Uint32Array(n);
    this.v4Org = new Uint32Array(n);
    let k = 0;
    // The file is UTF-8; read as latin1 for speed (a byte per char), org names decoded below.
    for (const line of lines) {
      const f = fields(line);
      if (!f) continue;
      this.v4Start[k] = Number(f[0]);
      this.v4End[k] = Number(f[1]);
      this.v4Asn[k] = Number(f[2]);
      this.v4Org[k] = this.orgs.id(f[3]);
      k++;
    }
    this.v4Start = this.v4Start.subarray(0, k);
    for (let i = 1; i < this.orgs.names.length; i++) this.orgs.names[i] = Buffer.from(this.orgs.names[i]!, "latin1").toString("utf8");
  }

  /** `v4` as from ipv4Of (a 32-bit number), or -1 with `text` an IPv6 address. */
  lookup(v4: number, text: string): AsnRecord | null {
    if (v4 >= 0) {
      const i = bisect(this.v4Start, v4);
      if (i < 0 || v4 > this.v4End[i]!) return null;
      return { asn: this.v4Asn[i]!, org: this.orgs.names[this.v4Org[i]!] ?? null };
    }
    const v6 = ipv6Of(text);
    if (v6 === null) return null;
    const t = (this.v6 ??= this.loadV6());
    let lo = 0;
    let hi = t.start.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (t.start[mid]! <= v6) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (at < 0 || v6 > t.end[at]!) return null;
    return { asn: t.asn[at]!, org: this.orgs.names[t.org[at]!] ?? null };
  }

  private loadV6() {
    const lines = readFileSync(`${this.dir}/asn-ipv6-num.csv`, "utf8").split("\n");
    const start: bigint[] = [];
    const end: bigint[] = [];
    const asn: number[] = [];
    const org: number[] = [];
    for (const line of lines) {
      const f = fields(line);
      if (!f) continue;
      start.push(BigInt(f[0]));
      end.push(BigInt(f[1]));
      asn.push(Number(f[2]));
      org.push(this.orgs.id(f[3]));
    }
    return { start, end, asn: Uint32Array.from(asn), org: Uint32Array.from(org) };
  }
}

/** Index of the last range starting at or below `v`, or -1. */
function bisect(starts: Uint32Array, v: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= v) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return at;
}
