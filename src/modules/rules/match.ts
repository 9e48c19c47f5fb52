/**
 * Rule conditions compiled to a predicate once, when a rule is defined (a bad regex or CIDR
 * block is refused then, not at the first event). Pure: no clock, no database. Regexes run on
 * RE2 (regex.ts), as attackers choose the text they are matched against.
 *
 * Country and ASN read `geo.country` and `geo.asn` of the event; until enrichment puts `geo`
 * on events they match nothing (docs/outputs.md).
 */
import { BlockList, isIP } from "node:net";
import { fieldOf, globRegex, type OutEvent } from "../outputs";
import type { RuleMatch } from "./model";
import { RegexError, compileRegex } from "./regex";

export class RuleError extends Error {
  override name = "RuleError";
}

const list = <T>(v: T | T[] | undefined): T[] | undefined => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

function addresses(specs: string[]): (ip: string | null) => boolean {
  const block = new BlockList();
  for (const spec of specs) {
    const [addr, bits, extra] = spec.split("/");
    const family = isIP(addr ?? "");
    const type = family === 6 ? "ipv6" : "ipv4";
    const prefix = bits === undefined ? null : Number(bits);
    if (family === 0 || extra !== undefined || (prefix !== null && !(bits !== "" && Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 6 ? 128 : 32)))) {
      throw new RuleError(`src_ip: ${JSON.stringify(spec)} is not an address or CIDR block`);
    }
    if (prefix === null) block.addAddress(addr!, type);
    else block.addSubnet(addr!, prefix, type);
  }
  return (ip) => {
    if (ip === null) return false;
    const family = isIP(ip);
    return family !== 0 && block.check(ip, family === 6 ? "ipv6" : "ipv4");
  };
}

export function compileMatch(m: RuleMatch | undefined): (e: OutEvent) => boolean {
  if (!m) return () => true;
  const tests: ((e: OutEvent) => boolean)[] = [];
  const glob = (key: "event_type" | "pot_id" | "pot_type", v: string | string[] | undefined) => {
    const pats = list(v);
    if (!pats) return;
    const re = globRegex(pats);
    tests.push((e) => e[key] !== null && re.test(e[key]!));
  };
  glob("event_type", m.event_type);
  glob("pot_id", m.pot_id);
  glob("pot_type", m.pot_type);
  const nodes = list(m.node_id);
  if (nodes) {
    const set = new Set(nodes.map((n) => BigInt(n)));
    tests.push((e) => e.node_id !== null && set.has(e.node_id));
  }
  const ips = list(m.src_ip);
  if (ips) {
    const has = addresses(ips);
    tests.push((e) => has(e.src_ip));
  }
  const countries = list(m.country);
  if (countries) {
    const set = new Set(countries.map((c) => c.toUpperCase()));
    tests.push((e) => typeof e.geo?.country === "string" && set.has(e.geo.country.toUpperCase()));
  }
  const asns = list(m.asn);
  if (asns) {
    const set = new Set(asns);
    tests.push((e) => typeof e.geo?.asn === "number" && set.has(e.geo.asn));
  }
  for (const f of m.fields ?? []) {
    if (f.equals === undefined && f.regex === undefined) throw new RuleError(`fields: the condition on ${f.field} needs equals or regex`);
    let matches: ((text: string) => boolean) | null = null;
    if (f.regex !== undefined) {
      try {
        matches = compileRegex(f.regex, f.ignore_case === true);
      } catch (e) {
        if (e instanceof RegexError) throw new RuleError(`fields: ${f.field}: ${e.message}`);
        throw e;
      }
    }
    const path = f.field;
    const equals = f.equals;
    tests.push((e) => {
      const v = fieldOf(e, path);
      if (v === undefined || v === null) return false;
      if (equals !== undefined && v !== equals && !(typeof v !== "object" && String(v) === String(equals))) return false;
      if (matches && !(typeof v !== "object" && matches(String(v)))) return false;
      return true;
    });
  }
  return (e) => {
    for (const t of tests) if (!t(e)) return false;
    return true;
  };
}
