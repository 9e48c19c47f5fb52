/** How the console writes numbers and times. */
const nf = new Intl.NumberFormat("en");

/** A country's English name from its ISO 3166-1 alpha-2 code (the browser's own data, no bytes shipped), with the code; a name or an unknown code as it is. */
const regions = typeof Intl.DisplayNames === "function" ? new Intl.DisplayNames(["en"], { type: "region", fallback: "none" }) : null;
export function countryName(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return code;
  let name: string | undefined;
  try {
    name = regions?.of(code);
  } catch {
    name = undefined;
  }
  return name && name !== code ? `${name} (${code})` : code;
}

/** An autonomous system as `AS15169 Google LLC`; the number alone when the data has no name. */
export const asName = (asn: string | number, org?: string | null) => `AS${asn}${org ? ` ${org}` : ""}`;

export const num = (n: number | null | undefined) => (n === null || n === undefined ? "–" : nf.format(n));

export function time(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function ago(iso: string | number | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return "–";
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(s)) return "–";
  if (s < 5) return "just now";
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/** A short line for an event: what the attacker did. */
export function summary(e: { event_type: string; data: Record<string, any> }): string {
  const d = e.data ?? {};
  if (d.username !== undefined && d.password !== undefined) return `${d.username} / ${d.password}`;
  if (typeof d.input === "string") return d.input;
  if (typeof d.url === "string") return d.url;
  if (typeof d.message === "string") return d.message;
  return "";
}
