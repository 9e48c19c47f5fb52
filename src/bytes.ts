/**
 * A size as people read it, the same in the CLI and the console: 3032 -> "3.0 KiB"
 * (binary units, one decimal; bytes below 1 KiB as they are).
 */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  for (; v >= 1024 && u < units.length - 1; u++) v /= 1024;
  return `${v.toFixed(1)} ${units[u]}`;
}
