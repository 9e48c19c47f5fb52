import { describe, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { BIG_ID, freePort, registerNode, startTestCore, tempDir, type TestCore } from "../helpers";
import { FAST, FIXTURE_CATALOGUE } from "../node/node-helpers";
import { cli } from "./cli-helpers";

/** A control character a terminal would act on (newlines aside). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding raw controls is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** A real node agent on the fixture catalogue (kind `testpot`), registered with `core`. */
async function startAgent(core: TestCore, data: string, name = "sensor-1") {
  const registered = Promise.withResolvers<bigint>();
  const off = core.bus.subscribe((m) => m.kind === "NodeRegistration" && registered.resolve((m.payload as { node_id: bigint }).node_id));
  const node = await startNode(
    { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: join(data, "node"), name, relay_port: 0, catalogue: FIXTURE_CATALOGUE, log_level: "silent", ...FAST },
    silentLogger(),
  );
  await registered.promise;
  off();
  return Object.assign(node, { [Symbol.asyncDispose]: () => node.stop() });
}

const lines = (text: string) => text.trimEnd().split("\n");

describe("install, start, stop, restart, status with a real node agent", () => {
  test("each command waits for the pot's state and says where it got to, in both modes", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using node = await startAgent(core, dir.path);
    const id = node.nodeId;
    const port = String(freePort());

    const install = await cli(["install", "sensor-1", "testpot", "--pot-id", "web-1", "--config", `listen_port=${port}`, "-c", "banner=hello"], core);
    expect(install.code).toBe(0);
    expect(lines(install.stderr)).toEqual([
      expect.stringMatching(new RegExp(`^InstallPot web-1: sent to node sensor-1 \\(${id}\\), command [0-9a-f-]{36}$`)),
      expect.stringMatching(/^  web-1: Installing \(installing testpot from .*\)$/),
    ]);
    expect(install.stdout).toStartWith(`web-1 is Stopped on node sensor-1 (${id}): installed`);

    const start = await cli(["start", String(id), "web-1", "--json"], core);
    expect(start).toMatchObject({ code: 0, stderr: "" });
    expect(start.json).toEqual({ node_id: id, node_name: "sensor-1", pot_id: "web-1", pot_type: "testpot", status: "Running", ok: true, message: expect.any(String) });

    const status = await cli(["status", "sensor-1", "web-1"], core);
    expect(status.code).toBe(0);
    expect(lines(status.stdout)[0]).toMatch(/^POT\s+TYPE\s+STATUS\s+NODE/);
    expect(lines(status.stdout)[1]).toMatch(/^web-1\s+testpot\s+Running\s+sensor-1/);
    expect((await cli(["status", "sensor-1", "web-1", "--json"], core)).json).toMatchObject({ pot_id: "web-1", pot_type: "testpot", status: "Running", ok: true });

    const restart = await cli(["restart", "sensor-1", "web-1"], core);
    expect(restart).toMatchObject({ code: 0 });
    expect(restart.stdout).toStartWith(`web-1 is Running on node sensor-1 (${id})`);

    const stop = await cli(["stop", "sensor-1", "web-1", "--json"], core);
    expect(stop.json).toMatchObject({ pot_id: "web-1", status: "Stopped", ok: true });
    expect((await cli(["pots", "--json"], core)).json).toEqual({ honeypots: [{ node_id: id, pot_id: "web-1", pot_type: "testpot", status: "Stopped" }] });

    const both = await cli(["install", "sensor-1", "testpot", "--pot-id", "web-2", "--config", `listen_port=${freePort()}`, "--start", "--json"], core);
    expect(both).toMatchObject({ code: 0, stderr: "", json: { pot_id: "web-2", pot_type: "testpot", status: "Running", ok: true } });
  });

  test("Failed is reported with the node's message, exit 1", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using _node = await startAgent(core, dir.path);

    const failedInstall = await cli(["install", "sensor-1", "testpot", "--pot-id", "bad-1", "-c", `listen_port=${freePort()}`, "-c", "install_mode=fail"], core);
    expect(failedInstall.code).toBe(1);
    expect(failedInstall.stdout).toBe("");
    expect(lines(failedInstall.stderr).at(-1)).toMatch(/^honeybee: bad-1 failed on node sensor-1 \(\d+\): .*install log/);

    const unknownKind = await cli(["install", "sensor-1", "mailpot", "--pot-id", "bad-2", "--json"], core);
    expect(unknownKind.code).toBe(1);
    expect(unknownKind.json).toMatchObject({ pot_id: "bad-2", status: "Failed", ok: false, message: expect.stringContaining("testpot") });
    expect(unknownKind.stderr).toMatch(/^honeybee: bad-2 failed on node sensor-1 \(\d+\): .*mailpot/);

    const port = String(freePort());
    expect((await cli(["install", "sensor-1", "testpot", "--pot-id", "crash-1", "-c", `listen_port=${port}`, "-c", "mode=crash_on_start"], core)).code).toBe(0);
    const crash = await cli(["start", "sensor-1", "crash-1"], core);
    expect(crash.code).toBe(1);
    expect(crash.stderr).toContain("cannot open /dev/honey");

    // A second install under a pot id in use fails, although the node reports that pot's status first.
    const dup = await cli(["install", "sensor-1", "testpot", "--pot-id", "crash-1", "-c", `listen_port=${freePort()}`], core);
    expect(dup.code).toBe(1);
    expect(lines(dup.stderr).at(-1)).toMatch(/^honeybee: crash-1 failed on node sensor-1 \(\d+\): .*crash-1/);

    const missing = await cli(["status", "sensor-1", "ghost"], core);
    expect(missing).toMatchObject({ code: 1, stdout: "" });
    expect(lines(missing.stderr).at(-1)).toMatch(/^honeybee: ghost failed on node sensor-1 \(\d+\): no pot ghost is installed on this node/);
  });

  test("--no-wait prints the command id and returns once Core has sent it", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using _node = await startAgent(core, dir.path);
    const res = await cli(["install", "sensor-1", "testpot", "--pot-id", "w-1", "-c", `listen_port=${freePort()}`, "--no-wait"], core);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    const json = await cli(["stop", "sensor-1", "w-1", "--no-wait", "--json"], core);
    expect(json.json).toEqual({ command_id: expect.any(String), node_id: expect.any(BigInt), pot_id: "w-1", command: "StopPot" });
  });
});

describe("logs, metrics and remove print the node's answer", () => {
  test("with a real node agent and pot, in both modes", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using node = await startAgent(core, dir.path);
    const id = node.nodeId;
    expect((await cli(["install", "sensor-1", "testpot", "--pot-id", "web-1", "-c", `listen_port=${freePort()}`, "--start"], core)).code).toBe(0);

    const logs = await cli(["logs", "sensor-1", "web-1"], core);
    expect(logs).toMatchObject({ code: 0, stderr: "" });
    expect(lines(logs.stdout)).toEqual(["==> stdout <==", expect.stringContaining('"ready":true'), "", "==> install <==", ...lines(logs.stdout).slice(4)]);
    expect(lines(logs.stdout).slice(4)).toContain("resolving dependencies");
    expect(await cli(["logs", "sensor-1", "web-1", "--stream", "install", "-n", "1"], core)).toMatchObject({ code: 0, stdout: "# installed\n" });
    expect((await cli(["logs", "sensor-1", "web-1", "--json"], core)).json).toEqual({ node_id: id, node_name: "sensor-1", pot_id: "web-1", stdout: [expect.any(String)], stderr: [], install: expect.arrayContaining(["resolving dependencies"]) });

    // What a honeypot logged came from attackers: control characters reach the terminal escaped.
    appendFileSync(join(dir.path, "node", "logs", "web-1", "stderr.log"), "login: \x1b[2Jroot\x07\n");
    expect((await cli(["logs", "sensor-1", "web-1", "--stream", "stderr"], core)).stdout).toBe("login: \\x1b[2Jroot\\x07\n");

    const metrics = await cli(["metrics", "sensor-1", "web-1"], core);
    expect(metrics.code).toBe(0);
    expect(lines(metrics.stdout).map((l) => l.slice(0, 15).trim())).toEqual(["pot", "node", "status", "pid", "uptime", "cpu", "memory", "restarts", "events relayed"]);
    expect(lines(metrics.stdout)[2]).toBe("status         Running");
    expect((await cli(["metrics", "sensor-1", "web-1", "--json"], core)).json).toMatchObject({ node_id: id, pot_id: "web-1", status: "Running", restarts: 0, events_relayed: 0 });

    expect(await cli(["remove", "sensor-1", "web-1"], core)).toMatchObject({ code: 0, stdout: `removed web-1 from node sensor-1 (${id})\n` });
    expect((await cli(["pots", "--json"], core)).json).toEqual({ honeypots: [] });
    expect((await cli(["remove", "sensor-1", "web-1", "--json"], core)).json).toEqual({ node_id: id, node_name: "sensor-1", pot_id: "web-1", ok: true, removed: false, message: "no pot web-1 on this node; nothing to remove" });
    const gone = await cli(["metrics", "sensor-1", "web-1"], core);
    expect(gone).toMatchObject({ code: 1, stdout: "" });
    expect(gone.stderr).toBe(`honeybee: node sensor-1 (${id}) could not answer for web-1: no pot web-1 is installed on this node (installed: none)\n`);
  });

  test("a node that never answers (an upstream node): time-out naming the command, exit 1", async () => {
    await using core = await startTestCore();
    using _silent = await registerNode(core, BIG_ID, "mute");
    const res = await cli(["remove", "mute", "ssh-01", "--timeout", "1"], core);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^honeybee: node mute \\(${BIG_ID}\\) did not answer RemovePot within 1 s \\(command [0-9a-f-]{36}\\); a node without CommandResult support`));
  });
});

describe("errors of the commands that wait for a node", () => {
  test("a node that never answers: time-out, exit 1", async () => {
    await using core = await startTestCore();
    using _silent = await registerNode(core, BIG_ID, "mute");
    const res = await cli(["start", "mute", "ssh-01", "--timeout", "1"], core);
    expect(res.code).toBe(1);
    expect(lines(res.stderr).at(-1)).toBe(
      `honeybee: timed out after 1 s waiting for ssh-01 on node mute (${BIG_ID}) to be Running (last status: none yet); the node may still finish: check with "honeybee status ${BIG_ID} ssh-01"`,
    );
  });

  test("a node that disconnects while the command runs", async () => {
    await using core = await startTestCore();
    const node = await registerNode(core, BIG_ID, "flaky");
    const run = cli(["stop", "flaky", "ssh-01"], core);
    await node.nextKind("NodeCommand");
    node.close();
    const res = await run;
    expect(res.code).toBe(1);
    expect(lines(res.stderr).at(-1)).toBe("honeybee: ssh-01 failed on node flaky (18446744073709551557): the node disconnected (status Unknown) before the honeypot reached Stopped");
  });

  test("node not connected, unknown node, Core or its WebSocket unreachable: exit 1", async () => {
    await using core = await startTestCore();
    const gone = await registerNode(core, BIG_ID, "gone");
    const unknown = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "NodeStatusUpdate" && unknown.resolve());
    gone.close();
    await unknown.promise;
    expect(await cli(["start", "gone", "ssh-01"], core)).toMatchObject({
      code: 1,
      stderr: `honeybee: node ${BIG_ID} is not connected; its status is Unknown; is its node agent running? check with "honeybee nodes"\n`,
    });
    expect(await cli(["stop", "7", "ssh-01"], core)).toMatchObject({ code: 1, stderr: 'honeybee: node 7 is not registered; list the nodes with "honeybee nodes"\n' });
    const deadWs = `ws://127.0.0.1:${freePort()}`;
    expect(await cli(["status", "gone", "ssh-01", "--ws", deadWs], core)).toMatchObject({
      code: 1,
      stderr: `honeybee: cannot reach Core's WebSocket proxy at ${deadWs}; start it with "honeybee up" (or "honeybee core"), or point --ws / HONEYBEE_WS at it\n`,
    });
    const deadApi = `http://127.0.0.1:${freePort()}`;
    expect((await cli(["install", "x", "cowrie", "--pot-id", "p", "--api", deadApi], core)).stderr).toStartWith(`honeybee: cannot reach Core at ${deadApi}`);
  });

  test("every command: unknown node and unreachable Core, exit 1, nothing on stdout even with --json", async () => {
    await using core = await startTestCore();
    const dead = `http://127.0.0.1:${freePort()}`;
    const commands = [["install", "ghost", "cowrie", "--pot-id", "p"], ["start", "ghost", "p"], ["stop", "ghost", "p"], ["restart", "ghost", "p"], ["status", "ghost", "p"], ["logs", "ghost", "p"], ["metrics", "ghost", "p"], ["remove", "ghost", "p"]];
    for (const cmd of commands) {
      const args = [...cmd, "--json"];
      const [unknown, unreachable] = await Promise.all([cli(args, core), cli([...args, "--api", dead], core)]);
      expect({ args, code: unknown.code, stdout: unknown.stdout, stderr: unknown.stderr }).toEqual({ args, code: 1, stdout: "", stderr: 'honeybee: no node is named "ghost"; list the nodes with "honeybee nodes"\n' });
      expect({ args, code: unreachable.code, stderr: unreachable.stderr.split(" (")[0] }).toEqual({ args, code: 1, stderr: `honeybee: cannot reach Core at ${dead}` });
    }
  });

  test("bad arguments: exit 2, nothing sent", async () => {
    const off = { api: "http://127.0.0.1:1", ws: "ws://127.0.0.1:1" };
    const cases: [string[], string][] = [
      [["install", "n", "cowrie"], `required option '--pot-id <id>' not specified; see "honeybee install --help"`],
      [["install", "n", "cowrie", "--pot-id", "../etc"], `pot id "../etc" is not valid: use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit; see "honeybee install --help"`],
      [["install", "n", "cowrie", "--pot-id", "p", "--config", "ssh_port"], `option '-c, --config <key=value>' argument 'ssh_port' is invalid. expected KEY=VALUE with a lower-case key such as ssh_port=2222; see "honeybee install --help"`],
      [["start", "n"], `missing required argument 'pot'; see "honeybee start --help"`],
      [["stop", "n", "p", "--timeout", "soon"], `option '--timeout <seconds>' argument 'soon' is invalid. expected a whole number from 1 to 86400; see "honeybee stop --help"`],
      [["restart", "n", "p", "--force"], `unknown option '--force'; see "honeybee restart --help"`],
      [["logs", "n", "p", "--lines", "500"], `option '-n, --lines <count>' argument '500' is invalid. expected a whole number from 1 to 100; see "honeybee logs --help"`],
      [["remove", "n", "../etc"], `pot id "../etc" is not valid: use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit; see "honeybee remove --help"`],
    ];
    for (const [args, message] of cases) {
      const res = await cli(args, off);
      expect({ args, code: res.code, stderr: res.stderr }).toEqual({ args, code: 2, stderr: `honeybee: ${message}\n` });
    }
  });
});

describe("a node's text is escaped on every output path", () => {
  test("a command message with terminal escapes prints as visible escapes, in progress, result and error lines", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core, BIG_ID, "sensor-\u001b[31m1");
    const evil = "\u001b]0;owned\u0007\u001b[2J\rdone\nforged line";
    const shown = "\\x1b]0;owned\\x07\\x1b[2J\\rdone\\nforged line";
    const label = `sensor-\\x1b[31m1 (${BIG_ID})`;

    const start = cli(["start", String(BIG_ID), "ssh-01"], core);
    let sent = await node.nextKind("NodeCommand");
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Installing", message: evil });
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Running", message: evil });
    node.send("CommandResult", { command_id: sent.command_id, node_id: BIG_ID, ok: true, message: evil });
    const ok = await start;
    expect(ok.code).toBe(0);
    expect(lines(ok.stderr)).toEqual([`DeployPot ssh-01: sent to node ${label}, command ${sent.command_id}`, `  ssh-01: Installing (${shown})`]);
    expect(ok.stdout).toBe(`ssh-01 is Running on node ${label}: ${shown}\n`);

    const stop = cli(["stop", String(BIG_ID), "ssh-01"], core);
    sent = await node.nextKind("NodeCommand");
    node.send("CommandResult", { command_id: sent.command_id, node_id: BIG_ID, ok: false, message: evil });
    const failed = await stop;
    expect(failed.code).toBe(1);
    expect(lines(failed.stderr).at(-1)).toBe(`honeybee: ssh-01 failed on node ${label}: ${shown}`);
    for (const out of [ok.stdout, ok.stderr, failed.stdout, failed.stderr]) expect(out).not.toMatch(RAW_CONTROL);

    // --json keeps the exact text, escaped: C1 controls too (0x9b is a one-byte CSI).
    const c1 = `${evil}\u009b31m\u007f`;
    const json = cli(["start", String(BIG_ID), "ssh-01", "--json"], core);
    sent = await node.nextKind("NodeCommand");
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Running", message: c1 });
    node.send("CommandResult", { command_id: sent.command_id, node_id: BIG_ID, ok: true, message: c1 });
    const j = await json;
    expect(j.json).toMatchObject({ status: "Running", message: c1 });
    expect(j.stdout).not.toMatch(RAW_CONTROL);
  });
});
