/**
 * Human output of events and statistics. Pure; attacker-typed text is made terminal-safe by
 * the table module.
 */
import type { EventRecord } from "../modules/events";
import type { Stats as StatsSchema } from "../modules/stats";
import { clean, renderTable, truncate, type Column } from "./table";

export type { EventRecord };
export type Stats = typeof StatsSchema.static;

/** "2026-11-22 01:07:41": UTC, to the second; honeynets compare times across zones in UTC. */
export function shortTime(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]}` : iso;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null);

/** The one thing worth seeing about an event, from the fields honeypots share. */
export function eventDetail(e: EventRecord): string {
  const d = e.data ?? {};
  const user = str(d.username);
  if (user !== null && "password" in d) {
    const agent = str(d.user_agent);
    return `${user} / ${str(d.password) ?? ""}${agent ? `  (${agent})` : ""}`;
  }
  const fingerprint = str(d.fingerprint);
  if (fingerprint !== null) return `${user ?? "?"}: ${str(d.type) ?? "key"} ${fingerprint}`;
  const input = str(d.input);
  if (input !== null) return `$ ${input}`;
  const url = str(d.url);
  if (url !== null) return url;
  const version = str(d.version);
  if (version !== null && e.event_type.endsWith("client.version")) return version;
  if (e.event_type.endsWith("client.size")) return `terminal ${str(d.width)}x${str(d.height)}`;
  if (e.event_type.endsWith("client.var")) return `${str(d.name)}=${str(d.value)}`;
  const duration = str(d.duration);
  if (duration !== null) return `closed after ${duration} s`;
  if (e.event_type.endsWith("session.connect")) {
    const proto = str(d.protocol);
    const port = str(d.dst_port);
    return [proto, port && `to port ${port}`].filter(Boolean).join(" ");
  }
  return str(d.message) ?? "";
}

const COLUMNS: Column<EventRecord>[] = [
  { header: "TIME (UTC)", value: (e) => shortTime(e.timestamp) },
  { header: "POT", value: (e) => e.pot_id ?? "-" },
  { header: "EVENT", value: (e) => e.event_type },
  { header: "SOURCE", value: (e) => e.src_ip ?? "-" },
  { header: "DETAIL", value: eventDetail, shrink: true },
];

export function eventsTable(events: EventRecord[], width?: number): string {
  if (events.length === 0) return "No events match.";
  return renderTable(COLUMNS, events, width);
}

/** One event as a line of fixed-width columns, for a feed whose rows are not known ahead. */
export function eventLine(e: EventRecord): string {
  const widths = [19, 12, 26, 15];
  return COLUMNS.map((c, i) => {
    const v = clean(c.value(e));
    return i < widths.length ? truncate(v, widths[i]!).padEnd(widths[i]!) : v;
  })
    .join("  ")
    .trimEnd();
}

/** Totals, then one table per top list (sources, usernames, passwords, event types, countries, ASNs, commands, HASSH). */
export function statsText(s: Stats, width?: number): string {
  const since = shortTime(s.window_start).slice(0, 16);
  const i = s.ingest;
  const lines = [
    `Events: ${s.total_events} stored, ${s.window_events} in the last ${s.window} (since ${since} UTC)`,
    `Since Core started: ${i.received} received, ${i.committed} committed, ${i.rejected} rejected, ${i.pending} pending; ${i.connections} event connection(s) open`,
  ];
  const lists: [string, { value: string; count: number }[]][] = [
    ["SOURCE", s.top.src_ips],
    ["USERNAME", s.top.usernames],
    ["PASSWORD", s.top.passwords],
    ["EVENT TYPE", s.top.event_types],
    ["COUNTRY", s.top.countries ?? []],
    ["ASN", (s.top.asns ?? []).map((a) => ({ value: a.as_org ? `${a.value} ${a.as_org}` : a.value, count: a.count }))],
    ["COMMAND", s.top.commands ?? []],
    ["HASSH (SSH CLIENT)", s.top.hassh ?? []],
  ];
  for (const [header, rows] of lists) {
    if (rows.length === 0) continue;
    lines.push("", renderTable([{ header, value: (r: { value: string }) => r.value, shrink: true }, { header: "COUNT", value: (r) => String(r.count), right: true }], rows, width));
  }
  // Outputs only when there are any (docs/outputs.md): where a stalled one shows first.
  const outputs = s.outputs ?? [];
  if (outputs.length > 0) {
    type O = Stats["outputs"][number];
    lines.push(
      "",
      renderTable<O>(
        [
          { header: "OUTPUT", value: (o) => `${o.name} (${o.type})`, shrink: true },
          { header: "STATE", value: (o) => o.state },
          { header: "LAG", value: (o) => String(o.lag), right: true },
          { header: "DELIVERED", value: (o) => String(o.delivered), right: true },
          { header: "FAILED", value: (o) => String(o.failed), right: true },
          { header: "LAST ERROR", value: (o) => o.last_error ?? "", shrink: true },
        ],
        outputs,
        width,
      ),
    );
  }
  if (s.rules && s.rules.alerts > 0) lines.push("", `Alerts raised since Core started: ${s.rules.alerts}`);
  // The shipped data's licence (CC BY 4.0) asks for this credit wherever its results are shown.
  if (s.geo_attribution && ((s.top.countries ?? []).length > 0 || (s.top.asns ?? []).length > 0)) lines.push("", `Countries: ${s.geo_attribution.country}`, `ASNs: ${s.geo_attribution.asn}`);
  return lines.join("\n");
}
