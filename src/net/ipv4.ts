/**
 * IPv4 dotted quads as 32-bit numbers: a number is a cheaper Map key than a string sliced from
 * a batch (the counters and the GeoIP cache use them), and comes back as the same text.
 */

/** An IPv4 dotted quad as a 32-bit number; -1 for anything else (leading zeros too: the text must come back the same). */
export function ipv4Of(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let v = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      v = v * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? v * 256 + part : -1;
}

export function ipv4Text(v: number): string {
  return `${Math.floor(v / 16777216)}.${Math.floor(v / 65536) & 255}.${Math.floor(v / 256) & 255}.${v & 255}`;
}
