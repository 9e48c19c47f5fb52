/** How the console writes numbers and times. */
const nf = new Intl.NumberFormat("en");

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
