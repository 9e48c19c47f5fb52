/**
 * IBM QRadar Log Event Extended Format 2.0: `LEEF:2.0|Vendor|Product|Version|EventID|Delimiter|attrs`,
 * attributes separated by a tab (named `x09` in the header). LEEF defines no escaping: tabs and
 * line breaks inside values become spaces and `\n`, and `|` in header fields becomes `/`.
 */
import pkg from "../../../../package.json" with { type: "json" };
import { isAlert, type OutEvent } from "../event";
import { commonFields, severityOf } from "./cef";

const header = (s: string) => s.replace(/[|\r\n]/g, "/");
const value = (s: string) => s.replace(/\t/g, " ").replace(/\r\n|\r|\n/g, "\\n");

export function toLeef(e: OutEvent): string {
  const f = commonFields(e);
  const pairs: [string, string | number | undefined][] = [
    ["devTime", f.time],
    ["devTimeFormat", "epoch"],
    ["cat", isAlert(e) ? "alert" : e.event_type],
    ["sev", severityOf(e)],
    ["src", f.src],
    ["srcPort", f.srcPort],
    ["dst", f.dst],
    ["dstPort", f.dstPort],
    ["usrName", f.user],
    ["proto", f.proto],
    ["password", f.password],
    ["command", f.command],
    ["url", f.url],
    ["sha256", f.sha256],
    ["msg", f.msg],
    ["eventId", f.id],
    ["potId", f.pot],
    ["potType", f.potType],
    ["nodeId", f.node],
    ["rule", f.rule],
    ["srcCountry", f.country],
    ["srcAsn", f.asn],
  ];
  const attrs = pairs
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${value(String(v))}`)
    .join("\t");
  return `LEEF:2.0|HoneyBee|HoneyBee Core|${header(pkg.version)}|${header(e.event_type)}|x09|${attrs}`;
}
