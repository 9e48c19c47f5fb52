/**
 * Realistic event lines for the ingest bench: what a node relays from Cowrie (flat JSON with
 * node_id / pot_id / pot_type stamped), about 300 bytes each, a mix dominated by failed logins,
 * and source addresses skewed like real traffic: address index = floor(100000 * u^3).
 * Deterministic for a seed, so every scenario of a run sends the same events.
 */

const USERS = ["root", "admin", "user", "test", "ubuntu", "oracle", "pi", "postgres", "guest", "support", "ftpuser", "git", "nagios", "deploy"];
const PASSWORDS = ["123456", "password", "admin", "root", "12345678", "qwerty", "1234", "toor", "raspberry", "letmein", "111111", "abc123", "P@ssw0rd", "changeme"];
const NODE_ID = "18446744073709551557";
const POTS = ["cowrie-01", "cowrie-02", "cowrie-03"];

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

/** Returns a function making the i-th event line (no newline) with its time at `baseMs + i`. */
export function eventLines(seed: number, baseMs: number): (i: number) => string {
  const rnd = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  return (i) => {
    const a = Math.floor(100_000 * rnd() ** 3);
    const ip = `${(a * 2654435761) >>> 24}.${(a >> 8) & 255}.${a & 255}.${(a * 7 + 11) & 255}`;
    const session = ((a * 40503 + i) >>> 0).toString(16).padStart(12, "0");
    const head = `{"eventid":"`;
    const tail = `","sensor":"sensor-eu-1","timestamp":"${new Date(baseMs + i).toISOString()}","src_ip":"${ip}","src_port":${1024 + (i % 60000)},"dst_port":22,"session":"${session}","protocol":"ssh","node_id":${NODE_ID},"pot_id":"${POTS[i % 3]}","pot_type":"cowrie"}`;
    const r = rnd();
    if (r < 0.7) {
      const u = pick(USERS);
      const p = pick(PASSWORDS);
      return `${head}cowrie.login.failed","username":"${u}","password":"${p}","message":"login attempt [${u}/${p}] failed${tail}`;
    }
    if (r < 0.8) return `${head}cowrie.session.connect","dst_ip":"10.0.0.5","message":"New connection: ${ip}:${1024 + (i % 60000)} (10.0.0.5:22)${tail}`;
    if (r < 0.9) return `${head}cowrie.session.closed","duration":"${(i % 97) / 10}","message":"Connection lost after ${(i % 97) / 10} seconds${tail}`;
    if (r < 0.95) return `${head}cowrie.client.version","version":"SSH-2.0-libssh_0.9.6","message":"Remote SSH version: SSH-2.0-libssh_0.9.6${tail}`;
    if (r < 0.98) return `${head}cowrie.command.input","input":"uname -a; cat /proc/cpuinfo","message":"CMD: uname -a; cat /proc/cpuinfo${tail}`;
    return `${head}cowrie.login.success","username":"root","password":"${pick(PASSWORDS)}","message":"login attempt succeeded${tail}`;
  };
}
