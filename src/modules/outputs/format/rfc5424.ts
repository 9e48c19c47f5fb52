/**
 * RFC 5424 syslog messages and the framing of RFC 6587 (octet counting over TCP and TLS).
 * `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD] MSG`: the event type is the MSGID, the
 * event's ids go in a structured-data element under 32473 (the enterprise number RFC 5612
 * reserves for documentation; HoneyBee has none of its own), the message is the event as JSON,
 * CEF or LEEF.
 */
import { stringify } from "../../../protocol/json";
import { eventRecord, isAlert, type OutEvent } from "../event";
import { toCef } from "./cef";
import { toLeef } from "./leef";

export type PayloadFormat = "json" | "cef" | "leef";

/** Header fields are printable US-ASCII without spaces, of bounded length; `-` when empty. */
function token(s: string | null | undefined, max: number): string {
  const t = (s ?? "").replace(/[^\x21-\x7e]/g, "_").slice(0, max);
  return t === "" ? "-" : t;
}

/** SD-PARAM values escape `"`, `\` and `]`. */
const sdValue = (s: string) => s.replace(/["\\\]]/g, (c) => `\\${c}`);

export function payload(e: OutEvent, format: PayloadFormat): string {
  if (format === "cef") return toCef(e);
  if (format === "leef") return toLeef(e);
  return stringify(eventRecord(e));
}

export interface SyslogOptions {
  facility: number;
  hostname: string;
  format: PayloadFormat;
}

export function toRfc5424(e: OutEvent, o: SyslogOptions): string {
  // warning (4) for alerts, notice (5) for logins that succeeded, informational (6) for the rest.
  const severity = isAlert(e) ? 4 : e.event_type.includes("login.success") ? 5 : 6;
  const sd: [string, string | null][] = [
    ["event_id", String(e.id)],
    ["node_id", e.node_id === null ? null : e.node_id.toString()],
    ["pot_id", e.pot_id],
    ["pot_type", e.pot_type],
    ["src_ip", e.src_ip],
  ];
  const params = sd
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k}="${sdValue(v!)}"`)
    .join(" ");
  const ts = new Date(e.ts).toISOString();
  const msg = payload(e, o.format).replace(/[\r\n]+/g, " ");
  return `<${o.facility * 8 + severity}>1 ${ts} ${token(o.hostname, 255)} honeybee ${token(e.pot_id, 128)} ${token(e.event_type, 32)} [honeybee@32473 ${params}] ${msg}`;
}

/** RFC 6587 octet counting: the message's length in bytes, a space, the message. */
export function octetCounted(message: string): string {
  return `${Buffer.byteLength(message)} ${message}`;
}
