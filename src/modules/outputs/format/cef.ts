/**
 * ArcSight Common Event Format (CEF 0): `CEF:0|Vendor|Product|Version|SignatureID|Name|Severity|Extension`.
 * Header fields escape `\` and `|`; extension values escape `\`, `=` and line breaks.
 */
import pkg from "../../../../package.json" with { type: "json" };
import { isAlert, type OutEvent } from "../event";

const header = (s: string) => s.replace(/[\\|]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, " ");
const ext = (s: string) => s.replace(/[\\=]/g, (c) => `\\${c}`).replace(/\r\n|\r|\n/g, "\\n");
const SEVERITY: Record<string, number> = { low: 3, medium: 5, high: 8, critical: 10 };

export function severityOf(e: OutEvent): number {
  if (isAlert(e)) return SEVERITY[String(e.data.severity)] ?? 5;
  if (e.event_type.includes("login.success")) return 5;
  if (e.event_type.includes("command") || e.event_type.includes("download")) return 4;
  return 3;
}

/** Extension pairs shared by CEF and LEEF (their key names differ). */
export function commonFields(e: OutEvent): Record<string, string | number | undefined> {
  const d = e.data;
  const s = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : undefined);
  return {
    time: e.ts,
    src: e.src_ip ?? undefined,
    srcPort: s(d.src_port),
    dst: s(d.dst_ip),
    dstPort: s(d.dst_port),
    user: s(d.username),
    password: s(d.password),
    command: s(d.input),
    url: s(d.url),
    sha256: s(d.shasum),
    proto: s(d.protocol),
    msg: s(d.message) ?? s(d.reason),
    pot: e.pot_id ?? undefined,
    potType: e.pot_type ?? undefined,
    node: e.node_id?.toString(),
    id: e.id,
    rule: isAlert(e) ? s(d.rule) : undefined,
    country: e.geo?.country ?? undefined,
    asn: e.geo?.asn ?? undefined,
  };
}

export function toCef(e: OutEvent): string {
  const f = commonFields(e);
  const pairs: [string, string | number | undefined][] = [
    ["rt", f.time],
    ["src", f.src],
    ["spt", f.srcPort],
    ["dst", f.dst],
    ["dpt", f.dstPort],
    ["suser", f.user],
    ["app", f.proto],
    ["request", f.url],
    ["fileHash", f.sha256],
    ["msg", f.msg],
    ["externalId", f.id],
    ["deviceExternalId", f.node],
    ["cs1Label", f.pot === undefined ? undefined : "pot_id"],
    ["cs1", f.pot],
    ["cs2Label", f.potType === undefined ? undefined : "pot_type"],
    ["cs2", f.potType],
    ["cs3Label", f.password === undefined ? undefined : "password"],
    ["cs3", f.password],
    ["cs4Label", f.command === undefined ? undefined : "command"],
    ["cs4", f.command],
    ["cs5Label", f.rule === undefined ? undefined : "rule"],
    ["cs5", f.rule],
    ["cs6Label", f.country === undefined ? undefined : "country"],
    ["cs6", f.country],
    ["cn1Label", f.asn === undefined ? undefined : "asn"],
    ["cn1", f.asn],
  ];
  const extension = pairs
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${ext(String(v))}`)
    .join(" ");
  return `CEF:0|HoneyBee|HoneyBee Core|${header(pkg.version)}|${header(e.event_type)}|${header(isAlert(e) ? `alert ${String(e.data.rule)}` : e.event_type)}|${severityOf(e)}|${extension}`;
}
