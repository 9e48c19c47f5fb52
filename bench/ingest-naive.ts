/**
 * What the ingest bench's baselines do with a line, in every shape the producer sends: the
 * obvious JSON.parse and pick the columns. Flat lines keep the whole line as data (as the
 * first baseline always has); envelopes keep their `data` object, re-serialised.
 */

/** ts, node_id, pot_id, pot_type, event_type, src_ip, data: the baselines' table, in column order. */
export type NaiveRow = [number, string, string, string, string, string | null, string];

export type NaiveLine = { kind: "event"; row: NaiveRow } | { kind: "registration"; nodeId: string } | { kind: "other" };

export function naiveLine(line: string): NaiveLine {
  const o = JSON.parse(line);
  if (typeof o.eventid === "string") return { kind: "event", row: [Date.parse(o.timestamp), String(o.node_id), o.pot_id, o.pot_type, o.eventid, o.src_ip ?? null, line] };
  const m = o.message;
  const p = m?.PotEvent ?? m?.PotLog;
  if (p) {
    const data = p.data ?? {};
    return { kind: "event", row: [Date.parse(p.timestamp), String(p.node_id), p.pot_id, p.pot_type, p.event_type ?? p.log_type, p.src_ip ?? data.src_ip ?? null, JSON.stringify(data)] };
  }
  // A node's first message on the control channel: the producer waits for the ack.
  if (m?.NodeRegistration) return { kind: "registration", nodeId: /"node_id":(\d+)/.exec(line)![1]! };
  return { kind: "other" };
}

export const registrationAck = (nodeId: string) => `{"version":2,"message":{"RegistrationAck":{"node_id":${nodeId},"accepted":true,"message":"registered"}}}\n`;

/** CPU time of the whole process (every thread) so far, µs. */
export function processCpu(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/**
 * The baselines' progress lines: `expected` is a comma list of running totals ("1000000,3000000":
 * a warm-up, then the measured run); the returned function, given the events done so far,
 * prints {"done": Date.now(), "cpu"} once for each total reached.
 */
export function doneLines(expected: string): (count: number) => void {
  const totals = expected.split(",").map(Number);
  return (count) => {
    while (totals.length && count >= totals[0]!) {
      totals.shift();
      console.log(JSON.stringify({ done: Date.now(), cpu: processCpu() }));
    }
  };
}
