/**
 * The IP-to-ASN data that ships with Core (npm package `@ip-location-db/asn`: RouteViews, the
 * five RIRs' delegations and DB-IP's IP to ASN Lite, CC BY 4.0). That package publishes CSV
 * only (its MMDB sibling is not on the npm registry), so the ranges are read into sorted typed
 * arrays and searched by bisection: ~410,000 IPv4 ranges load in a fraction of a second and a
 * lookup is a few hundred nanoseconds. IPv6 ranges load on the first IPv6 lookup.
 */
import { readFileSync } from "node:fs";
import { ipv6Of } from "./address";

const MASK64 = (1n << 64n) - 1n;

export interface AsnRecord {
  asn: number;
  org: string | null;
}

/** A decimal number in `file[from, to)` (up to 2^53: IPv4 ranges and ASNs). */
function decimal(file: Buffer, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) v = v * 10 + (file[i]! - 48);
  return v;
}

/**
 * Reads the package's CSV (`start,end,asn,org`, the org maybe quoted with "" for a quote)
 * straight from the file's bytes: splitting 20 MB of text into lines first left ~100 MB of
 * garbage behind, and decoding each row's fields cost a second per load (measured). An AS
 * has one organisation name: it is decoded from the AS's first row only.
 */
function eachRow(file: Buffer, row: (from: number, a: number, b: number, asn: number, org: () => string) => void): void {
  const n = file.length;
  // One pass over the bytes: Buffer.indexOf costs a call into native code each time.
  let from = 0;
  let commas = 0;
  const at = [0, 0, 0];
  let orgFrom = 0;
  let orgEnd = 0;
  const org = () => {
    const text = file.toString("utf8", orgFrom, orgEnd);
    return text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1).replaceAll('""', '"') : text;
  };
  for (let i = 0; i <= n; i++) {
    const ch = i < n ? file[i]! : 10;
    if (ch === 44 && commas < 3) at[commas++] = i;
    else if (ch === 10) {
      if (commas === 3) {
        orgFrom = at[2]! + 1;
        orgEnd = file[i - 1] === 13 ? i - 1 : i;
        row(from, at[0]!, at[1]!, decimal(file, at[1]! + 1, at[2]!), org);
      }
      from = i + 1;
      commas = 0;
    }
  }
}

/** Organisation names, one per AS (index 0: none). */
class Orgs {
  readonly names: (string | null)[] = [null];
  private readonly byAsn = new Map<number, number>();
  id(asn: number, name: () => string): number {
    let id = this.byAsn.get(asn);
    if (id === undefined) {
      const text = name();
      id = text === "" ? 0 : this.names.push(text) - 1;
      this.byAsn.set(asn, id);
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
  /** IPv6 ranges: the upper and lower 64 bits of each start and end, compared as a pair. */
  private v6: { startHi: BigUint64Array; startLo: BigUint64Array; endHi: BigUint64Array; endLo: BigUint64Array; asn: Uint32Array; org: Uint32Array } | null = null;

  constructor(private readonly dir: string) {
    const file = readFileSync(`${dir}/asn-ipv4-num.csv`);
    // Rows are fewer than a tenth of the bytes (each is over 20 bytes long).
    const max = Math.ceil(file.length / 10);
    const start = new Uint32Array(max);
    const end = new Uint32Array(max);
    const asn = new Uint32Array(max);
    const org = new Uint32Array(max);
    let k = 0;
    eachRow(file, (from, a, b, as, name) => {
      start[k] = decimal(file, from, a);
      end[k] = decimal(file, a + 1, b);
      asn[k] = as;
      org[k] = this.orgs.id(as, name);
      k++;
    });
    // Copies of the filled part, so the oversized arrays can go.
    this.v4Start = start.slice(0, k);
    this.v4End = end.slice(0, k);
    this.v4Asn = asn.slice(0, k);
    this.v4Org = org.slice(0, k);
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
    const hi = v6 >> 64n;
    const lo = v6 & MASK64;
    const le = (aHi: bigint, aLo: bigint, bHi: bigint, bLo: bigint) => aHi < bHi || (aHi === bHi && aLo <= bLo);
    let l = 0;
    let h = t.startHi.length - 1;
    let at = -1;
    while (l <= h) {
      const mid = (l + h) >>> 1;
      if (le(t.startHi[mid]!, t.startLo[mid]!, hi, lo)) {
        at = mid;
        l = mid + 1;
      } else h = mid - 1;
    }
    if (at < 0 || !le(hi, lo, t.endHi[at]!, t.endLo[at]!)) return null;
    return { asn: t.asn[at]!, org: this.orgs.names[t.org[at]!] ?? null };
  }

  private loadV6() {
    const file = readFileSync(`${this.dir}/asn-ipv6-num.csv`);
    const max = Math.ceil(file.length / 40);
    const t = { startHi: new BigUint64Array(max), startLo: new BigUint64Array(max), endHi: new BigUint64Array(max), endLo: new BigUint64Array(max), asn: new Uint32Array(max), org: new Uint32Array(max) };
    let k = 0;
    eachRow(file, (from, a, b, as, name) => {
      const start = BigInt(file.toString("latin1", from, a));
      const end = BigInt(file.toString("latin1", a + 1, b));
      t.startHi[k] = start >> 64n;
      t.startLo[k] = start & MASK64;
      t.endHi[k] = end >> 64n;
      t.endLo[k] = end & MASK64;
      t.asn[k] = as;
      t.org[k] = this.orgs.id(as, name);
      k++;
    });
    return { startHi: t.startHi.slice(0, k), startLo: t.startLo.slice(0, k), endHi: t.endHi.slice(0, k), endLo: t.endLo.slice(0, k), asn: t.asn.slice(0, k), org: t.org.slice(0, k) };
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
