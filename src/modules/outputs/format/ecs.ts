/**
 * Events in Elastic Common Schema field names, as T-Pot's Elasticsearch holds honeypot data,
 * so Filebeat, Vector or Fluent Bit ship them without a pipeline of their own. The honeypot's
 * own fields stay under `honeybee.data`; the well-known ones are also mapped to ECS fields.
 */
import { isAlert, type OutEvent } from "../event";

export const ECS_VERSION = "8.11.0";

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const port = (v: unknown): number | undefined => {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isInteger(n) && n > 0 && n < 65536 ? n : undefined;
};

/** ECS categorisation from the event type's words (cowrie.login.failed, honnypotter.login.success, ...). */
function categorise(type: string): { category: string[]; type: string[]; outcome?: "success" | "failure" } {
  const words = type.split(".");
  const has = (w: string) => words.includes(w);
  if (has("login")) return { category: ["authentication"], type: ["start"], outcome: has("success") ? "success" : has("failed") ? "failure" : undefined };
  if (has("command")) return { category: ["process"], type: ["start"] };
  if (has("download") || has("upload")) return { category: ["file"], type: ["creation"] };
  if (has("session") && has("connect")) return { category: ["network", "session"], type: ["connection", "start"] };
  if (has("session") && has("closed")) return { category: ["network", "session"], type: ["connection", "end"] };
  if (has("client")) return { category: ["network"], type: ["protocol"] };
  return { category: ["intrusion_detection"], type: ["info"] };
}

/** Drops undefined values (recursively) so the line holds only what is known. */
function clean<T>(o: T): T {
  if (Array.isArray(o) || o === null || typeof o !== "object") return o;
  const kept: [string, unknown][] = [];
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    const c = clean(v);
    if (c !== null && typeof c === "object" && !Array.isArray(c) && Object.keys(c).length === 0) continue;
    kept.push([k, c]);
  }
  // Defined, not assigned: a `__proto__` key in a honeypot's data stays a key rather than
  // becoming the copy's prototype.
  return Object.fromEntries(kept) as T;
}

export function toEcs(e: OutEvent): Record<string, unknown> {
  const d = e.data;
  const alert = isAlert(e);
  const cat = categorise(alert ? String((d.trigger as { event_type?: unknown } | undefined)?.event_type ?? "") : e.event_type);
  const username = str(d.username);
  const rule = alert ? str(d.rule) : undefined;
  return clean({
    "@timestamp": new Date(e.ts).toISOString(),
    ecs: { version: ECS_VERSION },
    message: str(d.message) ?? (alert ? str(d.reason) : undefined),
    event: {
      kind: alert ? "alert" : "event",
      category: cat.category,
      type: cat.type,
      outcome: cat.outcome,
      action: e.event_type,
      dataset: `honeybee.${e.pot_type ?? "unknown"}`,
      module: e.pot_type ?? undefined,
      id: String(e.id),
      severity: alert ? ({ low: 21, medium: 47, high: 73, critical: 99 } as Record<string, number>)[String(d.severity)] : undefined,
    },
    rule: rule ? { name: rule, description: str(d.description) } : undefined,
    source: {
      ip: e.src_ip ?? undefined,
      port: port(d.src_port),
      geo: e.geo?.country ? { country_iso_code: e.geo.country } : undefined,
      as: e.geo?.asn ? { number: e.geo.asn, organization: e.geo.as_org ? { name: e.geo.as_org } : undefined } : undefined,
    },
    destination: { ip: str(d.dst_ip), port: port(d.dst_port) },
    network: { protocol: str(d.protocol) },
    user: username ? { name: username } : undefined,
    related: { user: username ? [username] : undefined, ip: e.src_ip ? [e.src_ip] : undefined },
    process: str(d.input) ? { command_line: str(d.input) } : undefined,
    url: str(d.url) ? { original: str(d.url) } : undefined,
    file: str(d.shasum) ? { hash: { sha256: str(d.shasum) } } : undefined,
    user_agent: str(d.user_agent) ? { original: str(d.user_agent) } : undefined,
    observer: { type: "honeypot", vendor: "HoneyBee", product: e.pot_type ?? undefined, name: e.pot_id ?? undefined, hostname: str(d.sensor) },
    labels: { node_id: e.node_id?.toString(), pot_id: e.pot_id ?? undefined },
    honeybee: { event_id: e.id, session: str(d.session), password: str(d.password), data: d },
  });
}
