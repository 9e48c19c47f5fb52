/**
 * Sessions end to end: OpenSSH logs into the built-in cowrie run by a real node agent
 * connected to a real Core and types commands; the session is found through the filters,
 * its page holds its events in order, and its terminal recording, shipped by the node, plays
 * back (REST and `honeybee session ID --replay`) the very bytes the client received.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { parseCast } from "../../src/cli/replay";
import { cli } from "../cli/cli-helpers";
import { freePort, getJson, startTestCore, tempDir, until } from "../helpers";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "../helpers/clients";
import { onPostgres } from "../helpers/postgres";

const SSH_OPTS = [...SSH_PASSWORD_OPTS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password"];

test("an SSH session into cowrie on a node: listed, its page in order, its recording equal to what the client saw", async () => {
  using dir = tempDir();
  await using core = await startTestCore(onPostgres() ? {} : { db: `${dir.path}/core.db` });
  const node = await startNode(
    { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: `${dir.path}/node`, name: "rec", relay_port: 0, log_level: "silent", heartbeat_ms: 200, reconnect_min_ms: 10, reconnect_max_ms: 200 },
    silentLogger(),
  );
  try {
    await until(() => core.registry.link(node.nodeId), "the node's registration");
    const ssh = freePort();
    const install = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: String(ssh), telnet_port: String(freePort()), hostname: "web-3" }, auto_start: true } }),
    });
    expect(install.status).toBe(202);
    await until(async () => (await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots.some((p: any) => p.pot_id === "ssh-01" && p.status === "Running"), "cowrie Running");

    // A pty session (-tt) typing three commands: stdout is exactly what the server sent.
    const client = Bun.spawn([requireTool("ssh"), ...SSH_OPTS, "-tt", "-p", String(ssh), "root@127.0.0.1"], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: sshPasswordEnv("123456") });
    client.stdin.write("uname -a\necho hello world\nexit\n");
    client.stdin.end();
    const seen = Buffer.from(await new Response(client.stdout).arrayBuffer());
    expect(await client.exited).toBe(0);
    expect(seen.toString()).toContain("root@web-3:~# echo hello world\r\nhello world\r\n");

    const query = `login_success=true&has_commands=true&src_ip=127.0.0.1&node_id=${node.nodeId}&pot_id=ssh-01&since=10m`;
    const listed = await until(async () => {
      const s = (await getJson(`${core.api}/api/v1/sessions?${query}`)).body.sessions;
      return s.length === 1 && s[0].recording && s[0].closed && (await getJson(`${core.api}/api/v1/sessions/${s[0].id}/recording`)).status === 200 && s[0];
    }, "the session, closed, with its recording at Core");
    expect(listed).toMatchObject({ node_id: node.nodeId, pot_id: "ssh-01", pot_type: "cowrie", src_ip: "127.0.0.1", login_success: true, username: "root", password: "123456", commands: 3, files: 0 });
    expect((await getJson(`${core.api}/api/v1/sessions?${query.replace("has_commands=true", "has_commands=false")}`)).body.sessions).toEqual([]);

    const page = (await getJson(`${core.api}/api/v1/sessions/${listed.id}`)).body;
    const types = page.session_events.map((e: any) => e.event_type);
    expect(types[0]).toBe("cowrie.session.connect");
    expect(types.slice(-2)).toEqual(["cowrie.log.closed", "cowrie.session.closed"]);
    expect(types.filter((t: string) => t.startsWith("cowrie.login") || t === "cowrie.command.input")).toEqual(["cowrie.login.success", "cowrie.command.input", "cowrie.command.input", "cowrie.command.input"]);
    const ids = page.session_events.map((e: any) => e.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    expect(page.session_events.every((e: any) => e.data.session === listed.session)).toBe(true);
    expect(page.credentials).toEqual([{ timestamp: expect.any(String), username: "root", password: "123456", success: true }]);
    expect(page.command_lines.map((c: any) => c.input)).toEqual(["uname -a", "echo hello world", "exit"]);

    // The recording: asciicast v2 whose output is byte for byte what the client received.
    const res = await fetch(`${core.api}/api/v1/sessions/${listed.id}/recording`);
    expect(res.headers.get("content-type")).toBe("application/x-asciicast");
    const cast = Buffer.from(await res.arrayBuffer());
    const closed = page.session_events.find((e: any) => e.event_type === "cowrie.log.closed").data;
    expect(closed).toMatchObject({ size: cast.length, shasum: createHash("sha256").update(cast).digest("hex"), duplicate: false, duration: expect.stringMatching(/^\d+\.\d$/) });
    expect(closed.ttylog).toBe(`tty/${closed.shasum}.cast`);
    expect(page.recording_file).toEqual({ size: cast.length, sha256: closed.shasum, received: expect.any(String) });
    const parsed = parseCast(cast.toString());
    expect(parsed.header).toMatchObject({ version: 2, width: expect.any(Number), height: expect.any(Number), timestamp: expect.any(Number) });
    expect(Buffer.from(parsed.output.map(([, d]) => d).join(""))).toEqual(seen);

    // Replayed in the terminal, fast: the same bytes again.
    const replay = await cli(["session", String(listed.id), "--replay", "--speed", "1000"], core);
    expect(replay.stderr).toBe("");
    expect(replay.code).toBe(0);
    expect(Buffer.from(replay.stdout)).toEqual(seen);
  } finally {
    await node.stop();
  }
});
