import { describe, expect, test } from "bun:test";
import { parseTime } from "../../src/cli/events";
import { eventDetail, eventLine, eventsTable, statsText, type EventRecord } from "../../src/cli/event-format";
import { summary } from "../../src/cli/up";
import { CommandWatch } from "../../src/cli/wait";
import { clean, renderTable } from "../../src/cli/table";
import { nodeDetail } from "../../src/cli/format";
import type { NodeDetail } from "../../src/cli/client";

const ID = 18446744073709551557n;

describe("tables", () => {
  test("columns align, numbers right, nothing trails", () => {
    const rows = [{ a: "x", n: 5 }, { a: "longer", n: 12345 }];
    const out = renderTable([{ header: "NAME", value: (r: (typeof rows)[number]) => r.a }, { header: "N", value: (r) => String(r.n), right: true }], rows);
    expect(out.split("\n")).toEqual(["NAME        N", "x           5", "longer  12345"]);
  });

  test("a shrinkable column is cut to the terminal's width", () => {
    const rows = [{ a: "id-1", d: "a".repeat(60) }];
    const out = renderTable([{ header: "ID", value: (r: (typeof rows)[number]) => r.a }, { header: "DETAIL", value: (r) => r.d, shrink: true }], rows, 30);
    expect(out.split("\n").map((l) => l.length)).toEqual([12, 30]);
    expect(out).toEndWith("…");
  });

  test("attacker-typed control characters cannot reach the terminal", () => {
    expect(clean("root\u001b]0;pwned\u0007\u009b2J\r\n\tx\u007f")).toBe("root\\x1b]0;pwned\\x07\\x9b2J\\r\\n\\tx\\x7f");
  });
});

describe("events", () => {
  const base: EventRecord = { id: 1, node_id: ID, pot_id: "ssh-01", pot_type: "cowrie", event_type: "cowrie.login.failed", timestamp: "2026-11-22T01:07:41.947Z", src_ip: "203.0.113.7", data: {} };
  const at = (event_type: string, data: Record<string, unknown>) => eventDetail({ ...base, event_type, data });

  test("the detail worth seeing, per kind of event", () => {
    expect(at("cowrie.login.failed", { username: "root", password: "123456" })).toBe("root / 123456");
    expect(at("honnypotter.login.failed", { username: "admin", password: "hunter2", user_agent: "curl/7.88.1" })).toBe("admin / hunter2  (curl/7.88.1)");
    expect(at("cowrie.command.input", { input: "uname -a" })).toBe("$ uname -a");
    expect(at("cowrie.session.file_download", { url: "http://x/y.sh" })).toBe("http://x/y.sh");
    expect(at("cowrie.client.version", { version: "SSH-2.0-OpenSSH_9.2p1" })).toBe("SSH-2.0-OpenSSH_9.2p1");
    expect(at("cowrie.session.closed", { duration: "3.2" })).toBe("closed after 3.2 s");
    expect(at("cowrie.session.connect", { protocol: "ssh", dst_port: 2222 })).toBe("ssh to port 2222");
    expect(at("cowrie.client.fingerprint", { username: "root", fingerprint: "aa:bb", type: "ssh-ed25519" })).toBe("root: ssh-ed25519 aa:bb");
    expect(at("cowrie.client.size", { width: 80, height: 24 })).toBe("terminal 80x24");
    expect(at("cowrie.client.var", { name: "LANG", value: "C" })).toBe("LANG=C");
    expect(at("other.kind", { message: "hello" })).toBe("hello");
    expect(at("other.kind", {})).toBe("");
  });

  test("table (oldest first as given) and feed lines", () => {
    const e = { ...base, data: { username: "root", password: "x" } };
    expect(eventsTable([e]).split("\n")).toEqual([
      "TIME (UTC)           POT     EVENT                SOURCE       DETAIL",
      "2026-11-22 01:07:41  ssh-01  cowrie.login.failed  203.0.113.7  root / x",
    ]);
    expect(eventLine(e)).toBe("2026-11-22 01:07:41  ssh-01        cowrie.login.failed         203.0.113.7      root / x");
    expect(eventsTable([])).toBe("No events match.");
  });

  test("times: ISO, unix seconds, or an age before now", () => {
    const now = Date.parse("2026-11-22T12:00:00Z");
    expect(parseTime("15m", now)).toBe("2026-11-22T11:45:00.000Z");
    expect(parseTime("2h", now)).toBe("2026-11-22T10:00:00.000Z");
    expect(parseTime("7d", now)).toBe("2026-11-15T12:00:00.000Z");
    expect(parseTime("1795309661", now)).toBe("2026-11-22T01:07:41.000Z");
    expect(parseTime("2026-11-22T01:07:41+01:00", now)).toBe("2026-11-22T00:07:41.000Z");
    expect(() => parseTime("yesterday", now)).toThrow(/ISO 8601/);
  });

  test("stats: totals, then one table per top list", () => {
    const stats = {
      total_events: 12,
      window: "24h",
      window_start: "2026-11-21T13:00:00.000Z",
      window_events: 9,
      ingest: { received: 13, committed: 12, rejected: 1, connections: 1, pending: 0, duplicates: 0, unreadable_timestamps: 0 },
      security: { auth_enabled: false, node_auth_enabled: false, tls: false, auth_failures: 0, forbidden: 0, node_auth_failures: 0, rate_limited: { api: 0, ws_commands: 0 }, connections_refused: { node: 0, events: 0, ws: 0 } },
      outputs: [],
      rules: { state: "idle" as const, position: 12, lag: 0, delivered: 0, failed: 0, dropped: 0, last_error: null, last_delivery_at: null, alerts: 0, suppressed: {} },
      top: { src_ips: [{ value: "203.0.113.7", count: 9 }], usernames: [{ value: "root", count: 4 }], passwords: [], event_types: [{ value: "cowrie.login.failed", count: 4 }] },
    };
    expect(statsText(stats).split("\n")).toEqual([
      "Events: 12 stored, 9 in the last 24h (since 2026-11-21 13:00 UTC)",
      "Since Core started: 13 received, 12 committed, 1 rejected, 0 pending; 1 event connection(s) open",
      "",
      "SOURCE       COUNT",
      "203.0.113.7      9",
      "",
      "USERNAME  COUNT",
      "root          4",
      "",
      "EVENT TYPE           COUNT",
      "cowrie.login.failed      4",
    ]);
  });
});

test("stats: outputs as a table, and the alerts raised, when there are any", () => {
  const base = {
    total_events: 3,
    window: "24h",
    window_start: "2026-11-21T13:00:00.000Z",
    window_events: 3,
    ingest: { received: 3, committed: 3, rejected: 0, connections: 0, pending: 0, duplicates: 0, unreadable_timestamps: 0 },
    security: { auth_enabled: false, node_auth_enabled: false, tls: false, auth_failures: 0, forbidden: 0, node_auth_failures: 0, rate_limited: { api: 0, ws_commands: 0 }, connections_refused: { node: 0, events: 0, ws: 0 } },
    top: { src_ips: [], usernames: [], passwords: [], event_types: [] },
  };
  const reader = { position: 3, dropped: 0, last_delivery_at: null };
  const text = statsText({
    ...base,
    outputs: [
      { name: "siem", type: "syslog", origin: "config", state: "retrying", lag: 2, delivered: 1, failed: 4, last_error: "connect ECONNREFUSED 127.0.0.1:514", ...reader },
      { name: "ecs", type: "file", origin: "api", state: "idle", lag: 0, delivered: 3, failed: 0, last_error: null, ...reader },
    ],
    rules: { state: "idle", lag: 0, delivered: 3, failed: 0, alerts: 2, suppressed: {}, last_error: null, ...reader },
  });
  expect(text.split("\n").slice(2)).toEqual([
    "",
    "OUTPUT         STATE     LAG  DELIVERED  FAILED  LAST ERROR",
    "siem (syslog)  retrying    2          1       4  connect ECONNREFUSED 127.0.0.1:514",
    "ecs (file)     idle        0          3       0",
    "",
    "Alerts raised since Core started: 2",
  ]);
});

describe("waiting for a command's pot", () => {
  const spec = { commandId: "c1", nodeId: ID, potId: "ssh-01", target: "Running" };
  const pot = (status: string, message?: string) => ({ kind: "PotStatusUpdate", payload: { node_id: ID, pot_id: "ssh-01", pot_type: "cowrie", status, message } });
  const result = (ok: boolean, message?: string, command_id = "c1") => ({ kind: "CommandResult", payload: { command_id, node_id: ID, ok, message } });

  test("progress, then the target state", () => {
    const w = new CommandWatch(spec);
    expect(w.onMessage(pot("Stopped"))).toEqual({ done: false, progress: "ssh-01: Stopped" });
    expect(w.onMessage({ kind: "PotStatusUpdate", payload: { node_id: ID, pot_id: "other", status: "Running" } })).toEqual({ done: false });
    expect(w.onMessage(pot("Running", "pid 42"))).toEqual({ done: true, ok: true, status: "Running", potType: "cowrie", message: "pid 42" });
  });

  test("Failed, a refused command, a node that leaves", () => {
    expect(new CommandWatch(spec).onMessage(pot("Failed", "port 2222 is already in use"))).toMatchObject({ done: true, ok: false, message: "port 2222 is already in use" });
    expect(new CommandWatch(spec).onMessage(result(false, "no pot ssh-01"))).toMatchObject({ done: true, ok: false, message: "no pot ssh-01" });
    expect(new CommandWatch(spec).onMessage(result(false, "x", "someone-else"))).toEqual({ done: false });
    expect(new CommandWatch(spec).onMessage({ kind: "NodeStatusUpdate", payload: { node_id: ID, status: "Unknown" } })).toMatchObject({ done: true, ok: false });
    expect(new CommandWatch(spec).onMessage({ kind: "NodeDrop", payload: { node_id: ID } })).toMatchObject({ done: true, ok: false });
  });

  test("an ok result without a fresh status asks the registry", () => {
    const w = new CommandWatch(spec);
    expect(w.onMessage(result(true, "already running"))).toEqual({ done: false, askRegistry: true });
    expect(w.onRegistry("Running", "cowrie")).toEqual({ done: true, ok: true, status: "Running", potType: "cowrie", message: "already running" });
    const slow = new CommandWatch(spec);
    slow.onMessage(result(true));
    expect(slow.onRegistry("Stopped", "cowrie")).toEqual({ done: false });
  });

  test("an install counts states only once it was seen Installing", () => {
    const w = new CommandWatch({ ...spec, via: "Installing" });
    // A refused InstallPot for a pot id in use: its current status first, then the refusal.
    expect(w.onMessage(pot("Running"))).toEqual({ done: false });
    expect(w.onMessage(result(false, "pot_id ssh-01 is already installed"))).toMatchObject({ done: true, ok: false, message: "pot_id ssh-01 is already installed" });
    const fresh = new CommandWatch({ ...spec, via: "Installing" });
    expect(fresh.onMessage(pot("Installing"))).toMatchObject({ done: false, progress: "ssh-01: Installing" });
    expect(fresh.onMessage(pot("Stopped"))).toMatchObject({ done: false });
    expect(fresh.onMessage(pot("Running"))).toMatchObject({ done: true, ok: true });
  });

  test("a status query ends with the first status", () => {
    const w = new CommandWatch({ ...spec, target: null });
    expect(w.onMessage(pot("Stopped"))).toMatchObject({ done: true, ok: true, status: "Stopped" });
  });
});

test("up's summary names every address and the next command", () => {
  const text = summary({ host: "127.0.0.1", ports: { node: 9001, api: 9002, ws: 9003, event: 9100 }, node: { name: "local", id: ID, data: "data/node", relayPort: "9101" }, db: "data/honeybee.db", cli: "bin/honeybee" });
  expect(text).toBe(
    [
      'HoneyBee is up: Core and the node "local" run on this machine.',
      "",
      "  Console       http://127.0.0.1:9002/   (the web console, in a browser)",
      "  REST API      http://127.0.0.1:9002   (GET /health, /api/v1/...)",
      "  Swagger UI    http://127.0.0.1:9002/swagger",
      "  WebSocket     ws://127.0.0.1:9003   (live feed and commands)",
      "  Node channel  127.0.0.1:9001   (nodes connect here)",
      "  Event socket  127.0.0.1:9100",
      `  Node          local, id ${ID}, data in data/node, event relay 127.0.0.1:9101`,
      "  Database      data/honeybee.db",
      "",
      "Next, in another terminal, install an SSH honeypot on the node:",
      "  bin/honeybee install local cowrie --pot-id ssh-01 --start",
      "",
      "Ctrl-C stops the node, its honeypots and Core.",
    ].join("\n"),
  );
  const moved = summary({ host: "0.0.0.0", ports: { node: 1, api: 2, ws: 3, event: 4 }, node: { name: "n", id: 1n, data: "d" }, db: "x.db", cli: "honeybee" });
  expect(moved).toContain("  HONEYBEE_API=http://127.0.0.1:2 HONEYBEE_WS=ws://127.0.0.1:3 honeybee install n cowrie --pot-id ssh-01 --start");
});

test("node show: the heartbeat's age and the node's figures when its heartbeats carry them; an older node's without", () => {
  const now = Date.now();
  const base = { node_id: 7n, node_name: "edge", status: "Running", node_type: "Full", location: null, address: "10.0.0.5", port: 9001, last_seen: new Date(now).toISOString(), honeypots: [] } as unknown as NodeDetail;
  const beat = new Date(now - 4000).toISOString();
  const health = { agent_version: "1.2.3", uptime_s: 93_784, host_uptime_s: 600, cpus: 2, cpu_percent: 12.5, load_1m: 0.4, mem_total_bytes: 4 * 2 ** 30, mem_available_bytes: 3 * 2 ** 30, disk_total_bytes: 20 * 2 ** 30, disk_free_bytes: 5 * 2 ** 30, reported_at: beat };
  const text = nodeDetail({ ...base, last_heartbeat: beat, health });
  expect(text).toContain("Heartbeat: 4 s ago");
  expect(text).toContain("Agent:     v1.2.3, up 1 d 2 h");
  expect(text).toContain("Host up:   10 min");
  expect(text).toContain("CPU:       12.5% used, 2 CPU(s), load 0.4");
  expect(text).toContain("Memory:    1.0 GiB used of 4.0 GiB");
  expect(text).toContain("Disk:      5.0 GiB free of 20.0 GiB");
  const old = nodeDetail({ ...base, last_heartbeat: beat, health: null });
  expect(old).toContain("Heartbeat: 4 s ago");
  expect(old).not.toContain("Agent:");
  expect(nodeDetail({ ...base, last_heartbeat: null, health: null })).not.toContain("Heartbeat");
});
