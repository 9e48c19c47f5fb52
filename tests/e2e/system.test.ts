/**
 * The whole system: Core, a node agent, both built-in honeypots installed through the
 * WebSocket proxy, attacked by OpenSSH and curl; every event seen in REST, on a WebSocket
 * subscriber and in Core's log; StopPot closes the port and RestartPot brings it back.
 */
import { expect, test } from "bun:test";
import { Writable } from "node:stream";
import pino from "pino";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { WsClient, freePort, getJson, startTestCore, tempDir, until } from "../helpers";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "../helpers/clients";

const SSH_OPTS = [...SSH_PASSWORD_OPTS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password"];

async function run(argv: string[], env?: Record<string, string | undefined>): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore", env });
  const out = await new Response(p.stdout).text();
  return { code: await p.exited, out };
}

async function portOpen(port: number): Promise<boolean> {
  try {
    const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    s.end();
    return true;
  } catch {
    return false;
  }
}

test("install both kinds over the WebSocket, attack them, see every event everywhere", async () => {
  const logLines: string[] = [];
  const logger = pino({ level: "info" }, new Writable({ write: (c, _e, cb) => (logLines.push(c.toString()), cb()) }));
  using dir = tempDir();
  await using core = await startTestCore({ db: `${dir.path}/core.db`, log_events: true }, logger);
  const node = await startNode(
    { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: `${dir.path}/node`, name: "e2e", relay_port: 0, log_level: "silent", heartbeat_ms: 200, reconnect_min_ms: 10, reconnect_max_ms: 200 },
    silentLogger(),
  );
  try {
    using feed = await WsClient.connect(`${core.ws}/?kinds=PotEvent`);
    using operator = await WsClient.connect(core.ws);
    await until(() => core.registry.link(node.nodeId), "the node's registration");

    const ssh = freePort();
    const http = freePort();
    const install = async (pot_id: string, honeypot_type: string, config: Record<string, string>) => {
      operator.send({ version: 2, message: { NodeCommand: { node_id: node.nodeId, command: { InstallPot: { pot_id, honeypot_type, config, auto_start: true } } } } });
      expect(await operator.nextKind("CommandAck")).toMatchObject({ accepted: true, node_id: node.nodeId });
    };
    await install("ssh-01", "cowrie", { ssh_port: String(ssh), telnet_port: String(freePort()), hostname: "db-prod-2" });
    await install("web-01", "honnypotter", { http_port: String(http) });
    await until(async () => {
      const pots = (await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots;
      return pots.length === 2 && pots.every((p: any) => p.status === "Running") && pots;
    }, "both honeypots Running");

    // Attack: OpenSSH fails, then logs in and runs commands; curl posts a login.
    const sshClient = requireTool("ssh");
    expect((await run([sshClient, ...SSH_OPTS, "-p", String(ssh), "root@127.0.0.1", "id"], sshPasswordEnv("not-the-password"))).code).toBe(255);
    const shell = await run([sshClient, ...SSH_OPTS, "-p", String(ssh), "root@127.0.0.1", "uname -a; whoami"], sshPasswordEnv("123456"));
    expect(shell.code).toBe(0);
    expect(shell.out).toContain("root");
    const post = await run([requireTool("curl"), "-s", "-o", "/dev/null", "-w", "%{http_code}", "-d", "log=admin&pwd=hunter2", `http://127.0.0.1:${http}/standalone.php`]);
    expect(post.out).toBe("200");

    const wanted = [
      ["cowrie.login.failed", "ssh-01"],
      ["cowrie.login.success", "ssh-01"],
      ["cowrie.command.input", "ssh-01"],
      ["cowrie.session.closed", "ssh-01"],
      ["honnypotter.login.failed", "web-01"],
    ];
    const events = (await until(async () => {
      const list = ((await getJson(`${core.api}/api/v1/events?limit=500`)).body.events as any[]).filter((e) => e.pot_id === "ssh-01" || e.pot_id === "web-01");
      return wanted.every(([type, pot]) => list.some((e) => e.event_type === type && e.pot_id === pot)) && list;
    }, "the attack's events in REST")) as any[];
    for (const e of events) expect(e).toMatchObject({ node_id: node.nodeId, src_ip: "127.0.0.1" });
    expect(events.find((e) => e.event_type === "cowrie.login.failed").data).toMatchObject({ username: "root", password: "not-the-password" });
    expect(events.find((e) => e.event_type === "honnypotter.login.failed").data).toMatchObject({ username: "admin", password: "hunter2", request_uri: "/standalone.php" });
    expect(events.filter((e) => e.event_type === "cowrie.command.input").map((e) => e.data.input)).toEqual(["uname -a; whoami"]);

    // The same events on the live feed and in Core's log.
    for (const e of events) expect(await feed.nextKind("PotEvent", (p) => p.id === e.id)).toEqual(e);
    const logged = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === "event");
    for (const e of events) expect(logged.some((l) => l.event.id === e.id && l.event.event_type === e.event_type && l.event.node_id === node.nodeId.toString())).toBe(true);

    // StopPot closes the port; RestartPot brings it back.
    const command = async (c: object) => {
      const r = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(c) });
      expect(r.status).toBe(202);
      return until(async () => {
        const rec = (await getJson(`${core.api}/api/v1/commands/${r.body.command_id}`)).body;
        return rec.status !== "sent" && rec;
      }, "the command's result");
    };
    expect(await command({ StopPot: "ssh-01" })).toMatchObject({ status: "succeeded" });
    expect(await portOpen(ssh)).toBe(false);
    expect((await getJson(`${core.api}/api/v1/nodes/${node.nodeId}`)).body.honeypots).toContainEqual({ pot_id: "ssh-01", pot_type: "cowrie", status: "Stopped" });
    expect(await command({ RestartPot: "ssh-01" })).toMatchObject({ status: "succeeded" });
    await until(() => portOpen(ssh), "the SSH port back");
  } finally {
    await node.stop();
  }
});
