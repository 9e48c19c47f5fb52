import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BIG_ID, BUN, LineClient, freePort, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { stringify } from "../../src/protocol/json";
import { LiveProcess, MAIN, cli } from "./cli-helpers";

const T0 = Date.parse("2026-11-22T01:07:41Z");

function cowrie(eventid: string, i: number, extra: Record<string, unknown> = {}) {
  return {
    eventid,
    node_id: BIG_ID,
    honeybee_honeypot_id: "ssh-01",
    honeybee_honeypot_type: "cowrie",
    src_ip: "203.0.113.7",
    src_port: 40000 + i,
    dst_port: 2222,
    session: "61cb4b9d22c9",
    protocol: "ssh",
    timestamp: new Date(T0 + i * 1000).toISOString(),
    ...extra,
  };
}

/** Sends events to Core's event socket and waits until the live feed has them (they are committed). */
async function ingest(core: TestCore, events: object[]): Promise<void> {
  let left = events.length;
  const done = Promise.withResolvers<void>();
  const off = core.bus.subscribe((m) => m.kind === "PotEvent" && --left === 0 && done.resolve());
  using c = await LineClient.connect(core.ports.event);
  c.sendRaw(events.map((e) => stringify(e) + "\n").join(""));
  await done.promise;
  off();
}

const ATTACK = [
  cowrie("cowrie.session.connect", 0),
  cowrie("cowrie.login.failed", 1, { username: "root", password: "hunter2" }),
  cowrie("cowrie.login.success", 2, { username: "root", password: "123456" }),
  cowrie("cowrie.command.input", 3, { input: "uname -a" }),
  { eventid: "honnypotter.login.failed", pot_id: "web-01", pot_type: "honnypotter", timestamp: (T0 + 4000) / 1000, src_ip: "198.51.100.9", username: "admin", password: "x\u001b[2J", user_agent: "curl/7.88.1" },
];

describe("honeybee events", () => {
  test("a page of events, oldest first, with filters; --json gives Core's page in the same order", async () => {
    await using core = await startTestCore();
    await ingest(core, ATTACK);

    const all = await cli(["events"], core);
    expect(all).toMatchObject({ code: 0, stderr: "" });
    expect(all.stdout.split("\n")).toEqual([
      "TIME (UTC)           POT     EVENT                     SOURCE        DETAIL",
      "2026-11-22 01:07:41  ssh-01  cowrie.session.connect    203.0.113.7   ssh to port 2222",
      "2026-11-22 01:07:42  ssh-01  cowrie.login.failed       203.0.113.7   root / hunter2",
      "2026-11-22 01:07:43  ssh-01  cowrie.login.success      203.0.113.7   root / 123456",
      "2026-11-22 01:07:44  ssh-01  cowrie.command.input      203.0.113.7   $ uname -a",
      // The attacker's escape sequence is shown, not obeyed.
      "2026-11-22 01:07:45  web-01  honnypotter.login.failed  198.51.100.9  admin / x\\x1b[2J  (curl/7.88.1)",
      "",
    ]);

    const json = await cli(["events", "--json", "--pot", "ssh-01", "--type", "cowrie.login.failed"], core);
    expect(json.json).toEqual({
      events: [
        {
          id: expect.any(Number),
          node_id: BIG_ID,
          pot_id: "ssh-01",
          pot_type: "cowrie",
          event_type: "cowrie.login.failed",
          timestamp: "2026-11-22T01:07:42.000Z",
          src_ip: "203.0.113.7",
          data: expect.objectContaining({ username: "root", password: "hunter2", session: "61cb4b9d22c9" }),
        },
      ],
      next_cursor: null,
    });
    const ids = async (args: string[]) => (await cli(["events", "--json", ...args], core)).json.events.map((e: { event_type: string }) => e.event_type);
    expect(await ids(["--src-ip", "198.51.100.9"])).toEqual(["honnypotter.login.failed"]);
    expect(await ids(["--pot-type", "honnypotter"])).toEqual(["honnypotter.login.failed"]);
    expect(await ids(["--node", String(BIG_ID), "--since", "2026-11-22T01:07:43Z", "--until", "1795309665"])).toEqual(["cowrie.login.success", "cowrie.command.input"]);
    // --json lists events in the table's order: oldest first.
    expect(await ids([])).toEqual(ATTACK.map((e) => e.eventid));

    const page = await cli(["events", "--limit", "2"], core);
    expect(page.stdout.split("\n")).toHaveLength(4);
    const cursor = page.stderr.match(/^older events: add --cursor (\d+)$/m)![1]!;
    const older = await cli(["events", "--limit", "2", "--cursor", cursor, "--json"], core);
    expect(older.json.events.map((e: { event_type: string }) => e.event_type)).toEqual(["cowrie.login.failed", "cowrie.login.success"]);
  });

  test("--follow prints the latest, then new events as they are stored; --json one per line", async () => {
    await using core = await startTestCore();
    await ingest(core, ATTACK.slice(0, 3));
    await using follow = new LiveProcess([BUN, MAIN, "events", "--follow", "--limit", "2", "--pot", "ssh-01"], { env: { HONEYBEE_API: core.api, HONEYBEE_WS: core.ws } });
    await follow.waitFor("following events", "err");
    expect(follow.stdout.split("\n").filter(Boolean).map((l) => l.split(/\s{2,}/)[2])).toEqual(["cowrie.login.failed", "cowrie.login.success"]);

    // --json prints data only, no progress: its subscription shows as a second proxy client.
    await using json = new LiveProcess([BUN, MAIN, "events", "-f", "--json", "--limit", "1", "--src-ip", "198.51.100.9"], { env: { HONEYBEE_API: core.api, HONEYBEE_WS: core.ws } });
    await until(() => core.proxy.clients === 2, "the second follower's subscription");

    await ingest(core, ATTACK.slice(3));
    await follow.waitFor("$ uname -a");
    expect(follow.stdout).not.toContain("honnypotter");
    const line = (await json.waitFor("honnypotter")).trim();
    expect(line.split("\n")).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({ event_type: "honnypotter.login.failed", pot_id: "web-01", data: { username: "admin" } });
    // Ctrl-C ends a follow.
    expect(await follow.stop("SIGINT")).not.toBe(0);
  });

  test("--follow survives a Core restart: it reconnects and prints every event once, none missed", async () => {
    using dir = tempDir();
    const config = { node_port: freePort(), api_port: freePort(), ws_port: freePort(), event_port: freePort(), db: join(dir.path, "honeybee.db") };
    const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => cowrie("cowrie.command.input", from + i, { input: `cmd-${from + i}` }));
    let core = await startTestCore(config);
    try {
      await ingest(core, batch(0, 3));
      await using follow = new LiveProcess([BUN, MAIN, "events", "--follow", "--limit", "2"], { env: { HONEYBEE_API: core.api, HONEYBEE_WS: core.ws } });
      await follow.waitFor("following events", "err");
      await ingest(core, batch(3, 2));
      await follow.waitFor("$ cmd-4");

      await core.stop();
      await follow.waitFor("reconnecting", "err");
      core = await startTestCore(config);
      // Stored before the follower is back: it reads them from the database when it reconnects.
      await ingest(core, batch(5, 3));
      await follow.waitFor("again", "err");
      // Stored after: the live feed brings them.
      await ingest(core, batch(8, 2));
      const out = await follow.waitFor("$ cmd-9");
      expect(out.trimEnd().split("\n").map((l) => l.split(/\s{2,}/).at(-1))).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9"].map((i) => `$ cmd-${i}`));
    } finally {
      await core.stop();
    }
  });

  test("errors: unreachable Core or WebSocket, unknown node (1); bad time, limit or cursor (2)", async () => {
    await using core = await startTestCore();
    const dead = `http://127.0.0.1:${freePort()}`;
    expect((await cli(["events", "--api", dead], core)).stderr).toStartWith(`honeybee: cannot reach Core at ${dead} (connection refused)`);
    const deadWs = `ws://127.0.0.1:${freePort()}`;
    expect(await cli(["events", "--follow", "--ws", deadWs], core)).toMatchObject({ code: 1, stderr: expect.stringContaining(`cannot reach Core's WebSocket proxy at ${deadWs}`) });
    expect(await cli(["events", "--node", "nope"], core)).toMatchObject({ code: 1, stderr: 'honeybee: no node is named "nope"; list the nodes with "honeybee nodes"\n' });
    const usage: [string[], string][] = [
      [["events", "--since", "yesterday"], `option '--since <time>' argument 'yesterday' is invalid. expected an ISO 8601 time (2026-11-22T01:07:41Z), unix seconds, or an age such as 15m, 2h, 7d`],
      [["events", "--limit", "0"], `option '--limit <n>' argument '0' is invalid. expected a whole number from 1 to 1000`],
      [["events", "--cursor", "abc"], `option '--cursor <cursor>' argument 'abc' is invalid. expected the number printed after "older events: add --cursor"`],
      [["stats", "--window", "soon"], `window must be a number of minutes, hours or days like 15m, 24h or 7d`],
    ];
    for (const [args, message] of usage) {
      const res = await cli(args, core);
      expect({ args, code: res.code, stderr: res.stderr }).toEqual({ args, code: 2, stderr: expect.stringMatching(new RegExp(`^honeybee: ${RegExp.escape(message)}.*; see "honeybee ${args[0]} --help"\n$`)) });
    }
  });
});

describe("honeybee stats", () => {
  test("totals and top lists, in both modes", async () => {
    await using core = await startTestCore({ stats_flush_ms: 0 });
    await ingest(core, ATTACK.map((e) => ({ ...e, timestamp: new Date().toISOString() })));
    const json = await cli(["stats", "--json", "--window", "7d", "--top", "3"], core);
    expect(json.code).toBe(0);
    expect(json.json).toMatchObject({ total_events: 5, window: "7d", window_events: 5, top: { src_ips: [{ value: "203.0.113.7", count: 4 }, { value: "198.51.100.9", count: 1 }] } });
    const dead = `http://127.0.0.1:${freePort()}`;
    expect(await cli(["stats", "--json", "--api", dead])).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining(`cannot reach Core at ${dead}`) });
    const human = await cli(["stats"], core);
    expect(human.code).toBe(0);
    expect(human.stdout).toStartWith("Events: 5 stored, 5 in the last 24h (since ");
    expect(human.stdout).toMatch(/^203\.0\.113\.7\s+4$/m);
    expect(human.stdout).toMatch(/^root\s+2$/m);
  });
});
