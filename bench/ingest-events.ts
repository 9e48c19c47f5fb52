/**
 * Realistic events for the ingest benches: what a node relays from Cowrie, about 300 bytes
 * each, a mix dominated by failed logins, and source addresses skewed like real traffic:
 * address index = floor(100000 * u^3). Deterministic for a seed, so every scenario of a run
 * sends the same events, in each of the shapes Core accepts:
 *
 * - `flat`: Cowrie's own JSON with node_id / pot_id / pot_type stamped by the node;
 * - `potevent`: a Protocol v2 PotEvent envelope (columns at the top, the rest in `data`);
 * - `potlog`: a PotLog envelope as a v2 client sends it to 9100 (`log_type` = Cowrie's
 *   eventid, typed values in `data`);
 * - `potlog-control`: a PotLog as the upstream Go node sends it on the control channel: every
 *   data value a string (Go's map[string]string, keys sorted as encoding/json writes them),
 *   the time in RFC 3339 seconds.
 */

const USERS = ["root", "admin", "user", "test", "ubuntu", "oracle", "pi", "postgres", "guest", "support", "ftpuser", "git", "nagios", "deploy"];
const PASSWORDS = ["123456", "password", "admin", "root", "12345678", "qwerty", "1234", "toor", "raspberry", "letmein", "111111", "abc123", "P@ssw0rd", "changeme"];
export const NODE_ID = "18446744073709551557";
const POTS = ["cowrie-01", "cowrie-02", "cowrie-03"];

export const SHAPES = ["flat", "potevent", "potlog", "potlog-control"] as const;
export type Shape = (typeof SHAPES)[number];

/** mulberry32: small, fast, good enough for traffic shapes. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One event before it takes a shape: `extra` holds its type's own fields as [name, string value]. */
interface Parts {
  type: string;
  extra: [string, string][];
  ts: string;
  ip: string;
  srcPort: number;
  session: string;
  pot: string;
}

/** The address the generator gives address index `a`. */
export function addressOf(a: number): string {
  return `${(a * 2654435761) >>> 24}.${(a >> 8) & 255}.${a & 255}.${(a * 7 + 11) & 255}`;
}

/** Every address the generator can produce (for picking one it never sends). */
export const ADDRESS_COUNT = 100_000;

/**
 * Events come from attack sessions as Cowrie logs them: a connection, the client's version,
 * one to eight failed logins, now and then a successful one and a few commands, the close;
 * ~7.8 events a session. `LIVE_SESSIONS` sessions are open at once (a node's cowrie takes 256
 * connections per port) and their events interleave; a finished one is replaced by a new one
 * from an address drawn as above (hot addresses make many sessions). Cowrie's own sample has 3
 * sessions of 5-9 events in 22 lines (shared samples).
 *
 * `BENCH_SESSIONS=single` gives every event a session id of its own: the session writer's
 * worst case (a new session row per event), not a shape real traffic has.
 */
const LIVE_SESSIONS = 200;
const SINGLE_SESSIONS = process.env.BENCH_SESSIONS === "single";

interface Live {
  ip: string;
  srcPort: number;
  session: string;
  pot: string;
  /** Event types still to come, last first. */
  left: string[];
}

function generator(seed: number, baseMs: number, stepMs: number): (i: number) => Parts {
  const rnd = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const sessionId = () => (Math.floor(rnd() * 0x1000000) * 0x1000000 + Math.floor(rnd() * 0x1000000)).toString(16).padStart(12, "0");
  let started = 0;
  const open = (): Live => {
    const a = Math.floor(ADDRESS_COUNT * rnd() ** 3);
    const script = ["cowrie.session.connect", "cowrie.client.version"];
    for (let k = 1 + Math.floor(rnd() * 8); k > 0; k--) script.push("cowrie.login.failed");
    if (rnd() < 0.1) {
      script.push("cowrie.login.success");
      for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) script.push("cowrie.command.input");
    }
    script.push("cowrie.session.closed");
    return { ip: addressOf(a), srcPort: 1024 + ((started * 7919) % 60000), session: sessionId(), pot: POTS[started++ % 3]!, left: script.reverse() };
  };
  const live = Array.from({ length: LIVE_SESSIONS }, open);
  return (i) => {
    const at = Math.floor(rnd() * LIVE_SESSIONS);
    const s = live[at]!;
    const type = s.left.pop()!;
    if (s.left.length === 0) live[at] = open();
    const { ip, srcPort } = s;
    const session = SINGLE_SESSIONS ? sessionId() : s.session;
    const p: Parts = { type, extra: [], ts: new Date(baseMs + i * stepMs).toISOString(), ip, srcPort, session, pot: s.pot };
    switch (type) {
      case "cowrie.login.failed": {
        const u = pick(USERS);
        const pw = pick(PASSWORDS);
        p.extra = [["username", u], ["password", pw], ["message", `login attempt [${u}/${pw}] failed`]];
        break;
      }
      case "cowrie.session.connect":
        p.extra = [["dst_ip", "10.0.0.5"], ["message", `New connection: ${ip}:${srcPort} (10.0.0.5:22)`]];
        break;
      case "cowrie.session.closed":
        p.extra = [["duration", `${(i % 97) / 10}`], ["message", `Connection lost after ${(i % 97) / 10} seconds`]];
        break;
      case "cowrie.client.version":
        p.extra = [["version", "SSH-2.0-libssh_0.9.6"], ["message", "Remote SSH version: SSH-2.0-libssh_0.9.6"]];
        break;
      case "cowrie.command.input":
        p.extra = [["input", "uname -a; cat /proc/cpuinfo"], ["message", "CMD: uname -a; cat /proc/cpuinfo"]];
        break;
      default:
        p.extra = [["username", "root"], ["password", pick(PASSWORDS)], ["message", "login attempt succeeded"]];
    }
    return p;
  };
}

const fields = (kv: [string, string][]) => kv.map(([k, v]) => `"${k}":"${v}"`).join(",");

function format(shape: Shape, p: Parts, nodeId: string): string {
  const extra = fields(p.extra);
  switch (shape) {
    case "flat":
      return `{"eventid":"${p.type}",${extra},"sensor":"sensor-eu-1","timestamp":"${p.ts}","src_ip":"${p.ip}","src_port":${p.srcPort},"dst_port":22,"session":"${p.session}","protocol":"ssh","node_id":${nodeId},"pot_id":"${p.pot}","pot_type":"cowrie"}`;
    case "potevent":
      return `{"version":2,"message":{"PotEvent":{"node_id":${nodeId},"pot_id":"${p.pot}","pot_type":"cowrie","event_type":"${p.type}","timestamp":"${p.ts}","src_ip":"${p.ip}","data":{${extra},"sensor":"sensor-eu-1","src_port":${p.srcPort},"dst_port":22,"session":"${p.session}","protocol":"ssh"}}}}`;
    case "potlog":
      return `{"version":2,"message":{"PotLog":{"node_id":${nodeId},"pot_id":"${p.pot}","pot_type":"cowrie","log_type":"${p.type}","timestamp":"${p.ts}","data":{${extra},"sensor":"sensor-eu-1","src_ip":"${p.ip}","src_port":${p.srcPort},"dst_port":22,"session":"${p.session}","protocol":"ssh"}}}}`;
    case "potlog-control": {
      const data: [string, string][] = [...p.extra, ["sensor", "sensor-eu-1"], ["src_ip", p.ip], ["src_port", String(p.srcPort)], ["dst_port", "22"], ["session", p.session], ["protocol", "ssh"]];
      data.sort((x, y) => (x[0] < y[0] ? -1 : 1));
      return `{"version":2,"message":{"PotLog":{"node_id":${nodeId},"pot_id":"${p.pot}","pot_type":"cowrie","log_type":"${p.type}","data":{${fields(data)}},"timestamp":"${p.ts.slice(0, 19)}Z"}}}`;
    }
  }
}

/** Returns a function making the i-th flat event line (no newline) with its time at `baseMs + i`. */
export function eventLines(seed: number, baseMs: number): (i: number) => string {
  const make = eventLinesOf("flat", seed, baseMs);
  return (i) => make(i);
}

/**
 * The i-th event in a shape (no newline), its time at `baseMs + i * stepMs`; `nodeId` (u64 as
 * decimal text) is the node it names. The same seed gives the same events in every shape.
 */
export function eventLinesOf(shape: Shape, seed: number, baseMs: number, stepMs = 1): (i: number, nodeId?: string) => string {
  const parts = generator(seed, baseMs, stepMs);
  return (i, nodeId = NODE_ID) => format(shape, parts(i), nodeId);
}
