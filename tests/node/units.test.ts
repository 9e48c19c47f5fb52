import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { configOptions } from "../../src/cli/config-options";
import { ConfigError, flagsToConfig } from "../../src/config";
import { Backoff } from "../../src/node/backoff";
import { chooseSource, looksLikeGit } from "../../src/node/catalogue-fetch";
import { corePeers, hostPort, loadNodeConfig, NodeConfig, potDirs } from "../../src/node/config";
import { stampEvent } from "../../src/node/event-stamp";
import { loadOrCreateNodeId, lockDataDir, processStartTime } from "../../src/node/identity";
import { groupUsage, tailLines } from "../../src/node/pot-observe";
import { tempDir } from "../helpers";

const ctx = { nodeId: 18446744073709551557n, potType: (id: string) => (id === "ssh-1" ? "cowrie" : null), fallbackPot: null };

describe("event stamping", () => {
  test("flat events get node_id always, pot_id and pot_type when the pot is installed here", () => {
    expect(stampEvent({ eventid: "cowrie.login.failed", honeybee_honeypot_id: "ssh-1", node_id: 5 }, ctx)).toEqual({
      kind: "event",
      potId: "ssh-1",
      value: { eventid: "cowrie.login.failed", honeybee_honeypot_id: "ssh-1", node_id: 18446744073709551557n, pot_id: "ssh-1", pot_type: "cowrie" },
    });
    expect(stampEvent({ eventid: "x", pot_id: "elsewhere" }, ctx)).toEqual({ kind: "event", potId: null, value: { eventid: "x", pot_id: "elsewhere", node_id: 18446744073709551557n } });
    expect(stampEvent({ eventid: "x" }, { ...ctx, fallbackPot: "ssh-1" })).toMatchObject({ potId: "ssh-1", value: { pot_id: "ssh-1", pot_type: "cowrie" } });
  });

  test("envelopes: PotEvent/PotLog stamped inside, a hello recognised, other envelopes forwarded as they are", () => {
    expect(stampEvent({ version: 2, message: { PotLog: { pot_id: "ssh-1", data: "l" } } }, ctx)).toMatchObject({ value: { version: 2, message: { PotLog: { pot_id: "ssh-1", pot_type: "cowrie", node_id: 18446744073709551557n } } } });
    expect(stampEvent({ version: 2, message: { EventStreamHello: { acks: true } } }, ctx)).toEqual({ kind: "hello", acks: true });
    // Core stores these or says why not: the relay drops no JSON object.
    expect(stampEvent({ version: 2, message: { NodeDrop: null } }, ctx)).toEqual({ kind: "event", potId: null, value: { version: 2, message: { NodeDrop: null } } });
    expect(stampEvent({ version: 1, message: { PotEvent: {} } }, ctx)).toEqual({ kind: "event", potId: null, value: { version: 1, message: { PotEvent: {} } } });
    expect(stampEvent([1], ctx)).toEqual({ kind: "rejected", reason: "an event must be a JSON object" });
  });

  test("a honeypot's own `version` and `message` fields do not make an envelope", () => {
    const clientVersion = { eventid: "cowrie.client.version", version: "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6", message: "Remote SSH version: SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6", honeybee_honeypot_id: "ssh-1" };
    expect(stampEvent(clientVersion, ctx)).toEqual({ kind: "event", potId: "ssh-1", value: { ...clientVersion, node_id: 18446744073709551557n, pot_id: "ssh-1", pot_type: "cowrie" } });
    // Only an integer version and a one-key message naming a message kind are an envelope.
    for (const other of [{ version: 2, message: { Unknown: {} } }, { version: 2, message: { PotEvent: {}, extra: 1 } }, { version: "2", message: { PotEvent: {} } }, { version: 2, message: "PotEvent" }, { version: 2, message: { toString: {} } }]) {
      expect(stampEvent(other, ctx)).toEqual({ kind: "event", potId: null, value: { ...other, node_id: 18446744073709551557n } });
    }
  });
});

describe("backoff", () => {
  test("doubles up to the cap, jittered within the upper half, and resets", () => {
    const b = new Backoff(100, 1000, () => 1);
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([100, 200, 400, 800, 1000]);
    b.reset();
    const low = new Backoff(100, 1000, () => 0);
    expect([b.next(), low.next(), low.next()]).toEqual([100, 50, 100]);
  });
});

describe("node configuration", () => {
  test("flags over env over file over defaults; strings converted", () => {
    using dir = tempDir();
    const file = join(dir.path, "node.json");
    writeFileSync(file, JSON.stringify({ name: "from-file", relay_port: 9200, heartbeat_ms: 1000 }));
    const c = loadNodeConfig({ config: file, relay_port: "9300" }, { HONEYBEE_NAME: "from-env", HONEYBEE_CORE: "[::1]:9001" });
    expect(c).toMatchObject({ name: "from-env", relay_port: 9300, heartbeat_ms: 1000, core: "[::1]:9001", type: "Full", relay_host: "127.0.0.1" });
    expect(corePeers(c)).toEqual([{ control: { host: "::1", port: 9001 }, events: { host: "::1", port: 9100 } }]);
  });

  test("bad values name their key", () => {
    expect(() => loadNodeConfig({ type: "Sensor" }, {})).toThrow(/invalid value for "type"/);
    expect(() => loadNodeConfig({ relay_port: "70000" }, {})).toThrow(/invalid value for "relay_port"/);
    expect(() => loadNodeConfig({ relay_prot: "1" }, {})).toThrow(/unknown configuration key "relay_prot"/);
    expect(() => hostPort("core.example:0", "core")).toThrow(ConfigError);
    expect(() => loadNodeConfig({ reconnect_min_ms: "500", reconnect_max_ms: "100" }, {})).toThrow(/reconnect_max_ms must not be below reconnect_min_ms/);
  });

  test("pot_dir: the flag repeated, a JSON list in the environment, each POT_ID=DIR checked", () => {
    const node = new Command().exitOverride();
    for (const o of configOptions(NodeConfig, ["pot_dir"])) node.addOption(o);
    node.parse(["--pot-dir", "cowrie-lab=/opt/cowrie", "--pot-dir", "lab-2=relative/dir"], { from: "user" });
    const c = loadNodeConfig(flagsToConfig(node.opts()), {});
    expect(c.pot_dir).toEqual(["cowrie-lab=/opt/cowrie", "lab-2=relative/dir"]);
    expect(potDirs(c)).toEqual(new Map([["cowrie-lab", "/opt/cowrie"], ["lab-2", resolve("relative/dir")]]));
    expect(loadNodeConfig({}, { HONEYBEE_POT_DIR: '["a=/srv/a"]' }).pot_dir).toEqual(["a=/srv/a"]);
    expect(loadNodeConfig({}, {}).pot_dir).toEqual([]);
    for (const bad of ["/opt/cowrie", "=/opt/cowrie", "../x=/opt", "a="]) expect(() => loadNodeConfig({ pot_dir: [bad] }, {})).toThrow(/invalid value for "pot_dir": .* \(expected POT_ID=DIR/);
    expect(() => loadNodeConfig({ pot_dir: ["a=/x", "a=/y"] }, {})).toThrow('invalid value for "pot_dir": pot a is named twice');
  });
});

describe("identity", () => {
  test("a random u64 is made once and kept; a corrupt file stops start-up", () => {
    using dir = tempDir();
    const first = loadOrCreateNodeId(dir.path);
    expect(first.created).toBe(true);
    expect(loadOrCreateNodeId(dir.path)).toEqual({ nodeId: first.nodeId, created: false });
    writeFileSync(join(dir.path, "node_id"), "18446744073709551616\n");
    expect(() => loadOrCreateNodeId(dir.path)).toThrow(/does not hold a node id/);
  });
});

describe("catalogue sources", () => {
  test("git or directory", () => {
    expect(["https://github.com/x/y", "git@github.com:x/y", "/srv/catalogue.git", "file:///tmp/c"].map(looksLikeGit)).toEqual([true, true, true, true]);
    expect(["/srv/catalogue", "./catalogue", "C"].map(looksLikeGit)).toEqual([false, false, false]);
    expect(chooseSource({ catalogue: "/c", catalogue_branch: "" }, "https://g/x", "dev")).toEqual({ location: "https://g/x", branch: "dev", forceGit: true });
    expect(chooseSource({ catalogue: "https://g/x", catalogue_branch: "stable" })).toEqual({ location: "https://g/x", branch: "stable" });
  });
});

describe("what GetPotLogs and GetPotMetrics read", () => {
  test("tailLines: the last lines, oldest first, long ones cut; a partial first line of a big file is not shown", () => {
    using dir = tempDir();
    const file = join(dir.path, "stdout.log");
    expect(tailLines(file, 10, 100)).toEqual([]);
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`);
    writeFileSync(file, lines.join("\n") + "\n" + "x".repeat(50) + "\n");
    expect(tailLines(file, 3, 20)).toEqual(["line 19998", "line 19999", `${"x".repeat(20)}…`]);
    const all = tailLines(file, 100_000, 20);
    expect(all.length).toBeLessThan(lines.length);
    expect(all[0]).toMatch(/^line \d+$/);
    writeFileSync(file, "no newline at the end");
    expect(tailLines(file, 5, 100)).toEqual(["no newline at the end"]);
  });

  test("groupUsage: this process's group has CPU time and memory; an unknown group is null", () => {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const mine = groupUsage(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]));
    expect(mine).toEqual({ processes: expect.any(Number), rss_bytes: expect.any(Number), cpu_seconds: expect.any(Number) });
    expect(mine!.rss_bytes).toBeGreaterThan(1024 * 1024);
    expect(mine!.processes).toBeGreaterThanOrEqual(1);
    expect(groupUsage(2 ** 30)).toBeNull();
  });
});

describe("the data directory lock", () => {
  test("a second agent is refused; a lock of a dead process or of a recycled pid is taken over", async () => {
    using dir = tempDir();
    const file = join(dir.path, "node.lock");
    // Held by a live node agent: refused, naming it.
    const other = Bun.spawn(["sleep", "30"]);
    try {
      writeFileSync(file, `${other.pid} ${processStartTime(other.pid)}\n`);
      expect(() => lockDataDir(dir.path)).toThrow(`data directory ${dir.path} is in use by another node agent (pid ${other.pid}); give each node its own --data`);
      // The same pid, started at another time: the agent that wrote it is gone, the pid reused.
      writeFileSync(file, `${other.pid} 1\n`);
      lockDataDir(dir.path).release();
    } finally {
      other.kill("SIGKILL");
      await other.exited;
    }
    // Its process is dead (a node killed with SIGKILL): taken over.
    writeFileSync(file, `${other.pid} ${processStartTime(process.pid)}\n`);
    const lock = lockDataDir(dir.path);
    expect(readFileSync(file, "utf8")).toBe(`${process.pid} ${processStartTime(process.pid)}\n`);
    expect(() => lockDataDir(dir.path)).toThrow("is already used by a node agent in this process");
    lock.release();
    expect(existsSync(file)).toBe(false);
  });
});
