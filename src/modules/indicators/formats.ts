/**
 * Indicators in the formats threat-intelligence tools import: CSV, a STIX 2.1 bundle and a MISP
 * event. Pure functions of the indicator list (src/db/indicator-store.ts).
 *
 * STIX and MISP ids are UUIDv5 of the indicator's value in a namespace of this project, so
 * the same address exported twice has the same id and a TIP updates it instead of adding a
 * copy.
 */
import { createHash } from "node:crypto";
import { isIPv6 } from "node:net";
import type { AddressIndicator } from "../../db/indicator-store";

/** UUIDv5 namespace of HoneyBee Core's indicators (a random v4 UUID, fixed forever). */
const NAMESPACE = "5f0c1c52-8d3e-4c39-9a47-6c1f0b8a2e11";

export function uuidV5(name: string, namespace = NAMESPACE): string {
  const ns = Buffer.from(namespace.replaceAll("-", ""), "hex");
  const h = createHash("sha1").update(ns).update(name).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

// ---- CSV -----------------------------------------------------------------------------------

const CSV_COLUMNS = ["ip", "first_seen", "last_seen", "count", "country", "asn", "as_org", "credentials", "urls", "sha256"] as const;

/**
 * RFC 4180 fields. Usernames and URLs are the attackers' text: a cell that a spreadsheet would
 * run as a formula (starting with = + - @ or a control character) gets a leading apostrophe.
 */
function cell(v: string | number | null): string {
  if (v === null) return "";
  let s = String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function toCsv(list: AddressIndicator[]): string {
  const lines = [CSV_COLUMNS.join(",")];
  for (const a of list) {
    const creds = a.credentials.map((c) => `${c.username}:${c.password ?? ""}`).join(" ");
    lines.push([a.ip, iso(a.first_seen), iso(a.last_seen), a.count, a.country, a.asn, a.as_org, creds, a.urls.join(" "), a.sha256.join(" ")].map(cell).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}

// ---- STIX 2.1 ------------------------------------------------------------------------------

/** A string literal in a STIX pattern: backslash and quote escaped (STIX 2.1 §9.2). */
const stixString = (s: string) => `'${s.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

export function stixPattern(kind: "ip" | "url" | "sha256", value: string): string {
  if (kind === "ip") return `[${isIPv6(value) ? "ipv6-addr" : "ipv4-addr"}:value = ${stixString(value)}]`;
  if (kind === "url") return `[url:value = ${stixString(value)}]`;
  return `[file:hashes.'SHA-256' = ${stixString(value)}]`;
}

export function toStixBundle(list: AddressIndicator[], opts: { now: number; attribution: string }): Record<string, unknown> {
  const now = iso(opts.now);
  const identity = {
    type: "identity",
    spec_version: "2.1",
    id: `identity--${uuidV5("identity:honeybee-core")}`,
    created: "2026-01-01T00:00:00.000Z",
    modified: "2026-01-01T00:00:00.000Z",
    name: "HoneyBee Core",
    identity_class: "system",
  };
  const objects: Record<string, unknown>[] = [identity];
  const indicator = (kind: "ip" | "url" | "sha256", value: string, a: AddressIndicator, description: string) => ({
    type: "indicator",
    spec_version: "2.1",
    id: `indicator--${uuidV5(`${kind}:${value}`)}`,
    created: now,
    modified: now,
    created_by_ref: identity.id,
    name: kind === "ip" ? `Honeypot attacker ${value}` : kind === "url" ? `URL fetched by honeypot attacker ${a.ip}` : `File fetched by honeypot attacker ${a.ip}`,
    description,
    indicator_types: ["malicious-activity"],
    pattern: stixPattern(kind, value),
    pattern_type: "stix",
    pattern_version: "2.1",
    valid_from: iso(a.first_seen),
    labels: ["honeypot"],
  });
  const seen = new Set<string>();
  for (const a of list) {
    const where = [a.country, a.asn === null ? null : `AS${a.asn}${a.as_org ? ` ${a.as_org}` : ""}`].filter((x) => x !== null).join(", ");
    objects.push(indicator("ip", a.ip, a, `${a.count} honeypot events from ${iso(a.first_seen)} to ${iso(a.last_seen)}${where ? ` (${where})` : ""}.${opts.attribution ? ` ${opts.attribution}` : ""}`));
    for (const url of a.urls) if (!seen.has(`u${url}`) && seen.add(`u${url}`)) objects.push(indicator("url", url, a, `Fetched in a honeypot session from ${a.ip}.`));
    for (const h of a.sha256) if (!seen.has(`h${h}`) && seen.add(`h${h}`)) objects.push(indicator("sha256", h, a, `Downloaded in a honeypot session from ${a.ip}.`));
  }
  return { type: "bundle", id: `bundle--${crypto.randomUUID()}`, objects };
}

// ---- MISP ----------------------------------------------------------------------------------

export function toMispEvent(list: AddressIndicator[], opts: { now: number; attribution: string }): Record<string, unknown> {
  const ts = String(Math.floor(opts.now / 1000));
  const attributes: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const a of list) {
    const where = [a.country, a.asn === null ? null : `AS${a.asn}${a.as_org ? ` ${a.as_org}` : ""}`].filter((x) => x !== null).join(", ");
    attributes.push({
      uuid: uuidV5(`misp:ip:${a.ip}`),
      type: "ip-src",
      category: "Network activity",
      value: a.ip,
      to_ids: true,
      comment: `${a.count} honeypot events${where ? ` (${where})` : ""}`,
      first_seen: iso(a.first_seen),
      last_seen: iso(a.last_seen),
      timestamp: ts,
    });
    for (const url of a.urls) {
      if (seen.has(`u${url}`) || !seen.add(`u${url}`)) continue;
      attributes.push({ uuid: uuidV5(`misp:url:${url}`), type: "url", category: "Payload delivery", value: url, to_ids: true, comment: `fetched by ${a.ip}`, timestamp: ts });
    }
    for (const h of a.sha256) {
      if (seen.has(`h${h}`) || !seen.add(`h${h}`)) continue;
      attributes.push({ uuid: uuidV5(`misp:sha256:${h}`), type: "sha256", category: "Payload delivery", value: h, to_ids: true, comment: `downloaded by ${a.ip}`, timestamp: ts });
    }
  }
  return {
    Event: {
      uuid: crypto.randomUUID(),
      info: `HoneyBee Core honeypot indicators, ${iso(opts.now).slice(0, 10)}`,
      date: iso(opts.now).slice(0, 10),
      timestamp: ts,
      threat_level_id: "3",
      analysis: "2",
      distribution: "0",
      published: false,
      Tag: [{ name: "tlp:amber" }, { name: 'source:"honeypot"' }],
      // Where the countries and ASNs in the comments come from (CC BY 4.0 asks for the credit).
      Attribute: opts.attribution
        ? [...attributes, { uuid: uuidV5(`misp:comment:${opts.attribution}`), type: "comment", category: "Other", value: opts.attribution, to_ids: false, timestamp: ts }]
        : attributes,
    },
  };
}
