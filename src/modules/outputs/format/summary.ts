/** One line of text per event for chat messages (Slack, Teams). */
import { isAlert, type OutEvent } from "../event";

const q = (v: unknown): string | null => (typeof v === "string" || typeof v === "number" ? String(v) : null);

/** One line whatever the attacker typed: line breaks become ` ↵ `. */
export function summary(e: OutEvent): string {
  return line(e).replace(/\r\n|\r|\n/g, " ↵ ");
}

function line(e: OutEvent): string {
  const where = [e.pot_id, e.pot_type].filter(Boolean).join(" ");
  const from = e.src_ip ? ` from ${e.src_ip}` : "";
  const geo = e.geo?.country ? ` (${e.geo.country}${e.geo.asn ? `, AS${e.geo.asn}` : ""})` : "";
  if (isAlert(e)) {
    const d = e.data;
    const trigger = (d.trigger ?? {}) as { event_type?: unknown; data?: Record<string, unknown> };
    return `[${q(d.severity) ?? "alert"}] ${q(d.rule)}: ${q(d.reason) ?? ""}${from}${geo} on ${where || "?"} (${q(trigger.event_type) ?? "?"}${detail(trigger.data ?? {})})`;
  }
  return `${e.event_type}${from}${geo} on ${where || "?"}${detail(e.data)}`;
}

function detail(d: Record<string, unknown>): string {
  const parts: string[] = [];
  if (q(d.username) !== null) parts.push(`user ${q(d.username)}${q(d.password) !== null ? `/${q(d.password)}` : ""}`);
  if (q(d.input) !== null) parts.push(`command ${q(d.input)}`);
  if (q(d.url) !== null) parts.push(`url ${q(d.url)}`);
  return parts.length ? `: ${parts.join(", ")}` : "";
}
