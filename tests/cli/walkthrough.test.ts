/**
 * The README walkthrough, run command by command as written, so that it cannot rot.
 *
 * The walkthrough uses the default ports (9001-9003, 9100, 9101, 2222). To run it exactly as
 * written without clashing with anything on this machine, it runs in a private network
 * namespace (`unshare -rn`) when the kernel allows one; otherwise on the host, which needs those
 * ports free. It runs in a scratch folder that links to this checkout, so `./data` is fresh.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, until } from "../helpers";
import { requireTool, sshPasswordEnv } from "../helpers/clients";
import { NetNamespace } from "../helpers/netns";
import { LiveProcess } from "./cli-helpers";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const SECTION = README.slice(README.indexOf("<!-- walkthrough:start -->"), README.indexOf("<!-- walkthrough:end -->"));
const LONG_RUNNING = /\s+#\s*keeps running.*$/;

/** The commands of the walkthrough's ```sh blocks, in order, with their comments cut off. */
function readmeCommands(): { command: string; long: boolean }[] {
  const out: { command: string; long: boolean }[] = [];
  for (const block of SECTION.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split("\n")) {
      if (!line.trim() || line.trim().startsWith("#")) continue;
      out.push({ command: line.replace(LONG_RUNNING, "").replace(/\s+#.*$/, "").trim(), long: LONG_RUNNING.test(line) });
    }
  }
  return out;
}

// One of the weak passwords cowrie's default `credentials` let in, as the README suggests.
const PASSWORD = "123456";
const SSH_OPTS = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o NumberOfPasswordPrompts=1";

/** A scratch checkout in a network namespace of its own (when the kernel allows one). */
class Sandbox {
  private readonly ns = new NetNamespace();
  readonly dir = mkdtempSync(join(tmpdir(), "honeybee-walkthrough-"));

  async open(): Promise<void> {
    // A checkout made of links: the commands run as in a clone, with their own ./data.
    for (const entry of readdirSync(ROOT)) if (entry !== "data" && entry !== ".git") symlinkSync(join(ROOT, entry), join(this.dir, entry));
    if (NetNamespace.available()) await this.ns.start();
  }

  /** argv that runs a shell line inside the sandbox's network; `exec`, so signals reach the command itself. */
  argv(line: string): string[] {
    return this.ns.argv(line);
  }

  /** The environment of a newcomer's shell: none of the test run's HONEYBEE_* settings. */
  get env(): Record<string, string | undefined> {
    return Object.fromEntries(Object.entries(process.env).map(([k, v]) => [k, k.startsWith("HONEYBEE_") ? undefined : v]));
  }

  run(line: string, env: Record<string, string | undefined> = this.env): Promise<{ code: number; stdout: string; stderr: string }> {
    return this.ns.run(line, { cwd: this.dir, env });
  }

  start(line: string): LiveProcess {
    return new LiveProcess(this.argv(line), { cwd: this.dir, env: this.env });
  }

  /** Established TCP connections to a local port, read from the sandbox's own /proc/net/tcp. */
  async connectionsTo(port: number): Promise<number> {
    const { stdout } = await this.run("cat /proc/net/tcp /proc/net/tcp6");
    const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    return stdout.split("\n").filter((l) => {
      const f = l.trim().split(/\s+/);
      return f[2]?.endsWith(hex) && f[3] === "01";
    }).length;
  }

  close(): void {
    this.ns.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe("README walkthrough", () => {
  const box = new Sandbox();
  const running: LiveProcess[] = [];
  beforeAll(() => box.open());
  afterAll(async () => {
    for (const p of running) if (p.proc.exitCode === null) await p.stop("SIGTERM");
    box.close();
  });

  test("every command, as written, does what the README says", async () => {
    const commands = readmeCommands();
    const expectNext = (command: string, long = false) => {
      const next = commands.shift();
      expect(next).toEqual({ command, long });
    };
    const ok = async (command: string) => {
      expectNext(command);
      const res = await box.run(command);
      expect({ command, code: res.code, stderr: res.stderr }).toEqual({ command, code: 0, stderr: expect.any(String) });
      return res.stdout;
    };

    // 1. The checkout this test runs from is installed already: `npm install` is what made it.
    expectNext("npm install");

    // 2. Long-running: started as its own process and awaited on its summary.
    expectNext("bin/honeybee up", true);
    const up = box.start("bin/honeybee up");
    running.push(up);
    const summary = await up.waitFor("Ctrl-C stops the node, its honeypots and Core.");
    const block = SECTION.match(/```text\n([\s\S]*?)```/)![1]!.trimEnd().split("\n");
    for (const line of block) expect(summary).toContain(line);
    expect(summary).toContain("  bin/honeybee install local cowrie --pot-id ssh-01 --start");

    // 3.
    expect(await ok("bin/honeybee nodes")).toMatch(/^\d+\s+local\s+(Connected|Running)\s+Full\s+0$/m);
    // "Open the Swagger UI at <url> in a browser": the page is there and is Swagger UI.
    const swaggerUrl = SECTION.match(/Swagger UI at (http:\/\/\S+)/)![1]!;
    const swagger = await box.run(`node_modules/.bin/bun -e 'const r = await fetch("${swaggerUrl}"); console.log(r.status, (await r.text()).includes("swagger-ui"))'`);
    expect(swagger.stdout.trim()).toBe("200 true");
    // "Open the console at <url>": the page is there and is the console.
    const consoleUrl = SECTION.match(/the console at (http:\/\/\S+?)[.,]?\s/)![1]!;
    const page = await box.run(`node_modules/.bin/bun -e 'const r = await fetch("${consoleUrl}"); console.log(r.status, (await r.text()).includes("<title>HoneyBee Core</title>"))'`);
    expect(page.stdout.trim()).toBe("200 true");
    expect(await ok("bin/honeybee catalogue")).toMatch(/^cowrie\s+ssh-telnet, ssh\s+SSH and Telnet honeypot/m);
    expect(await ok("bin/honeybee catalogue cowrie")).toContain("ssh_port");

    // 4.
    expect(await ok("bin/honeybee install local cowrie --pot-id ssh-01 --start")).toMatch(/^ssh-01 is Running on node local/);
    expect(await ok("bin/honeybee pots")).toMatch(/^ssh-01\s+cowrie\s+Running\s+local\s+\d+$/m);

    // 5. Interactive by design: the same ssh arguments, with the password given through SSH_ASKPASS.
    expectNext("ssh -p 2222 root@127.0.0.1");
    const attack = `${requireTool("ssh")} ${SSH_OPTS} -p 2222 root@127.0.0.1 'uname -a; cat /etc/passwd'`;
    const withPassword = sshPasswordEnv(PASSWORD, box.env);
    const session = await box.run(attack, withPassword);
    expect(session.code).toBe(0);
    expect(session.stdout).toMatch(/Linux/);

    // 6. Events flow honeypot -> node relay -> Core; wait until Core has committed them.
    await until(async () => (await box.run("bin/honeybee events --json --type cowrie.command.input")).stdout.includes("uname -a"), "the attack's events", 300);
    const events = await ok("bin/honeybee events");
    expect(events).toMatch(/cowrie\.login\.success\s+127\.0\.0\.1\s+root \/ 123456/);
    expect(events).toMatch(/cowrie\.command\.input\s+127\.0\.0\.1\s+\$ uname -a/);

    expectNext("bin/honeybee events --follow", true);
    const follow = box.start("bin/honeybee events --follow");
    running.push(follow);
    await follow.waitFor("following events", "err");
    expect(follow.stdout).toContain("cowrie.login.success");

    const wsCommand = `node_modules/.bin/bun -e 'new WebSocket("ws://127.0.0.1:9003/?kinds=PotEvent").onmessage = (m) => console.log(m.data)'`;
    expectNext(wsCommand, true);
    const ws = box.start(wsCommand);
    running.push(ws);
    // Both watchers hold a connection to the proxy: the one-liner has subscribed.
    await until(async () => (await box.connectionsTo(9003)) >= 2, "the WebSocket client's connection", 300);

    // "attack again from another terminal and watch the lines appear"
    expect((await box.run(attack.replace("uname -a", "id"), withPassword)).code).toBe(0);
    await follow.waitFor(/cowrie\.command\.input\s+127\.0\.0\.1\s+\$ id/);
    const frame = (await ws.waitFor('"input":"id')).split("\n").find((l) => l.includes('"input":"id'))!;
    expect(JSON.parse(frame).message.PotEvent).toMatchObject({ pot_id: "ssh-01", pot_type: "cowrie", event_type: "cowrie.command.input", src_ip: "127.0.0.1" });
    await follow.stop();
    await ws.stop();

    // No waiting: what `events` has shown, `stats` counts.
    expect(await ok("bin/honeybee stats")).toMatch(/^123456\s+2$/m);

    // 7.
    expect(await ok("bin/honeybee stop local ssh-01")).toMatch(/^ssh-01 is Stopped on node local/);
    expect(commands).toEqual([]);
    // "press Ctrl-C in the terminal of honeybee up"
    expect(await up.stop("SIGINT")).toBe(0);
    // About 5 s (a honeypot install, two SSH sessions): more than bun's default per-test limit.
  }, 60_000);
});
