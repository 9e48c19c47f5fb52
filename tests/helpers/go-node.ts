/**
 * What the upstream Go node (H0neyBe/honeybee_node, internal/protocol/protocol.go) makes of a
 * honeypot's JSON line, written out here so tests can send exactly that: `NewPotEvent` keeps
 * `eventid` as the event, `message`, and the other fields that are strings, numbers or
 * booleans, as strings (Go's `%v`); `PotEventToPotLog` turns that into a PotLog whose
 * `log_type` is the event id, whose `data` is those fields plus `message`, and whose
 * `timestamp` is the node's clock in RFC 3339 seconds.
 */

/** Go's `fmt.Sprintf("%v", float64)`: the shortest digits, exponent form from 1e+06 on or below 1e-04. */
export function goFloat(v: number): string {
  if (v === 0) return "0";
  const [mantissa, exp] = v.toExponential().split("e") as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  return String(v);
}

/** A honeypot field as the Go node keeps it: a string, or nothing (nested values and null are dropped). */
export function goText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number") return goFloat(v);
  if (typeof v === "boolean") return String(v);
  return undefined;
}

/** The fields of a record as the Go node would have carried them. */
export function goData(data: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) {
    const s = goText(v);
    if (s !== undefined) out[k] = s;
  }
  return out;
}

/** RFC 3339 to the second, UTC, as Go's `time.Format(time.RFC3339)` writes it. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** The PotLog payload the Go node sends for one honeypot line. */
export function goPotLog(line: Record<string, unknown>, node: { node_id: bigint; pot_id: string; pot_type: string }, now = Date.now()): Record<string, unknown> {
  const { eventid, message, ...rest } = line;
  const data: Record<string, unknown> = goData(rest);
  if (typeof message === "string") data.message = message;
  return { node_id: node.node_id, pot_id: node.pot_id, pot_type: node.pot_type, log_type: eventid, data, timestamp: rfc3339Seconds(now) };
}

/** The PotEvent payload of the Go node's `NewPotEvent` (no pot_type). */
export function goPotEvent(line: Record<string, unknown>, node: { node_id: bigint; pot_id: string }, now = Date.now()): Record<string, unknown> {
  const { eventid, message, ...rest } = line;
  return { node_id: node.node_id, pot_id: node.pot_id, event: eventid, ...(typeof message === "string" ? { message } : {}), metadata: goData(rest), timestamp: Math.floor(now / 1000) };
}
