import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { CACHING_SHA2, sha2Response } from "../../src/honeypots/mysql/auth";
import { decodeHandshake, encodeHandshakeResponse } from "../../src/honeypots/mysql/handshake";
import { CLIENT, decodeColumnName, decodeRow, frame, type Packet, readPackets } from "../../src/honeypots/mysql/packets";
import { NODE_ID, type Pot, Relay, removeDir, run, startPot } from "./harness";
import { rssKb } from "./hostile";

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
const HEX = (bytes: number) => expect.stringMatching(new RegExp(`^[0-9a-f]{${bytes * 2}}$`));
const MARIADB_ATTRS = {
  client_name: "libmariadb",
  client_version: expect.stringMatching(/^3\.\d+\.\d+$/),
  client_os: "Linux",
  client_platform: expect.any(String),
  client_program: "mysql",
  client_attrs: expect.objectContaining({ _client_name: "libmariadb", _os: "Linux", _pid: expect.stringMatching(/^\d+$/), program_name: "mysql", _server_host: "127.0.0.1" }),
};

let relay: Relay;
let pot: Pot<"mysql">;
let port: number;

beforeAll(async () => {
  relay = Relay.start();
  pot = await startPot("mysql", { mysql_port: "0", hostname: "db01", max_connections: "20" }, relay);
  port = pot.ports.mysql;
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  removeDir(pot.dir);
});

function mariadb(target: number, ...args: string[]) {
  return run(["mariadb", "--no-defaults", "--connect-timeout=20", "-h", "127.0.0.1", "-P", String(target), ...args]);
}

/** The events of the next session that opens after `before` events, once it is closed. */
async function sessionAfter(before: number, source = relay): Promise<any[]> {
  const connect = await source.next((e) => e.eventid === "mysql.session.connect" && source.all.indexOf(e) >= before);
  await source.event("mysql.session.closed", { session: connect.session });
  return source.session(connect.session);
}

function common(session: string, target = port, potId = "mysql-test") {
  return { src_ip: "127.0.0.1", src_port: expect.any(Number), dst_ip: "127.0.0.1", dst_port: target, protocol: "mysql", session, timestamp: TIMESTAMP, pot_id: potId, pot_type: "mysql", node_id: expect.any(Number) };
}

/** A bare MySQL client over node:net (which queues writes), for what no real client sends. */
class RawMysql {
  private buf = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  readonly closed: Promise<void>;

  constructor(readonly socket: Socket) {
    socket.on("data", (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    socket.on("error", () => {});
    this.closed = new Promise((resolve) =>
      socket.on("close", () => {
        resolve();
        this.wake?.();
      }),
    );
  }

  static connect(target: number): Promise<RawMysql> {
    return new Promise((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port: target }, () => resolve(new RawMysql(socket)));
    });
  }

  /** The next whole packet, or null once the server has closed the connection. */
  async packet(): Promise<Packet | null> {
    for (;;) {
      const [first] = readPackets(this.buf, 1 << 24).packets;
      if (first) {
        this.buf = this.buf.subarray(4 + first.payload.length);
        return first;
      }
      if (this.socket.destroyed || this.socket.readableEnded) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  send(seq: number, payload: Uint8Array): void {
    this.socket.write(frame(seq, payload));
  }

  /** Writes `total` bytes from `chunk`, waiting on 'drain', until done or the server hangs up. */
  async flood(chunk: Buffer, total: number): Promise<number> {
    let sent = 0;
    while (sent < total && !this.socket.destroyed) {
      if (!this.socket.write(chunk)) await Promise.race([new Promise((r) => this.socket.once("drain", r)), this.closed]);
      sent += chunk.length;
    }
    return sent;
  }

  /** Logs in as root/root with caching_sha2_password's fast path. */
  async login(extra = 0): Promise<void> {
    const greeting = decodeHandshake((await this.packet())!.payload);
    const capabilities = CLIENT.PROTOCOL_41 | CLIENT.SECURE_CONNECTION | CLIENT.PLUGIN_AUTH | CLIENT.PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT.CONNECT_ATTRS | CLIENT.LONG_PASSWORD | extra;
    const response = sha2Response("root", greeting.scramble);
    this.send(1, encodeHandshakeResponse({ capabilities, maxPacket: 1 << 24, charset: 45, username: "root", authResponse: response, database: null, plugin: CACHING_SHA2, attrs: { _client_name: "raw" } }));
    expect([...(await this.packet())!.payload]).toEqual([1, 3]);
    expect((await this.packet())!.payload[0]).toBe(0);
  }
}

describe("the mariadb client", () => {
  test("logs in as root/root, reads the version and the databases; every step is recorded", async () => {
    const before = relay.all.length;
    const r = await mariadb(port, "-u", "root", "-proot", "-e", "SELECT @@version; SHOW DATABASES");
    expect(r).toEqual({ code: 0, stdout: "@@version\n8.0.39\nDatabase\ninformation_schema\nmysql\nperformance_schema\nsys\nwordpress\n", stderr: "" });
    const events = await sessionAfter(before);
    const session = events[0].session;
    expect(events).toEqual([
      { eventid: "mysql.session.connect", ...common(session) },
      {
        eventid: "mysql.login.success",
        username: "root",
        password: "root",
        password_source: "candidate",
        database: null,
        auth_plugin: "caching_sha2_password",
        auth_switch: null,
        scramble: HEX(20),
        auth_response: HEX(32),
        client_capabilities: expect.any(Number),
        ...MARIADB_ATTRS,
        message: "login attempt [root/root] succeeded",
        ...common(session),
      },
      { eventid: "mysql.command.input", input: "SELECT @@version", command: "query", database: null, ...common(session) },
      { eventid: "mysql.command.input", input: "SHOW DATABASES", command: "query", database: null, ...common(session) },
      { eventid: "mysql.session.closed", duration: expect.any(Number), ...common(session) },
    ]);
    expect(events[1].client_capabilities & CLIENT.CONNECT_ATTRS).toBe(CLIENT.CONNECT_ATTRS);
    expect(pot.fileLines().map((l) => JSON.parse(l).session)).toContain(session);
    expect(relay.lines.find((l) => l.includes(`"session":"${session}"`))).toContain(`"node_id":${NODE_ID}`);
  });

  test("a wrong password is refused as MySQL words it; Connector/C with its default --ssl sends the password in the clear", async () => {
    const before = relay.all.length;
    const r = await mariadb(port, "-u", "root", "-pwrongpass", "-e", "SELECT 1");
    expect(r).toEqual({ code: 1, stdout: "", stderr: "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)\n" });
    const failed = (await sessionAfter(before)).find((e) => e.eventid === "mysql.login.failed");
    expect(failed).toMatchObject({ username: "root", password: "wrongpass", password_source: "cleartext", reason: "denied", auth_plugin: "caching_sha2_password", auth_response: Buffer.from("wrongpass\0").toString("hex") });
  });

  test("with --skip-ssl the password comes RSA-encrypted to the server's key and is decrypted", async () => {
    const before = relay.all.length;
    const r = await mariadb(port, "--skip-ssl", "-u", "admin", "-pS3cret!x", "-e", "SELECT 1");
    expect(r.stderr).toBe("ERROR 1045 (28000): Access denied for user 'admin'@'localhost' (using password: YES)\n");
    const failed = (await sessionAfter(before)).find((e) => e.eventid === "mysql.login.failed");
    expect(failed).toMatchObject({ username: "admin", password: "S3cret!x", password_source: "rsa", reason: "denied", auth_response: HEX(256), message: "login attempt [admin/S3cret!x] failed" });
    expect(readFileSync(`${pot.dir}/public_key.pem`, "utf8")).toStartWith("-----BEGIN PUBLIC KEY-----");
  });

  test("--default-auth=mysql_native_password is switched to caching_sha2_password, as a MySQL 8.0 account asks", async () => {
    const before = relay.all.length;
    const r = await mariadb(port, "--default-auth=mysql_native_password", "-u", "root", "-proot", "-N", "-e", "SELECT USER(), CURRENT_USER()");
    expect(r).toEqual({ code: 0, stdout: "root@localhost\troot@%\n", stderr: "" });
    const success = (await sessionAfter(before)).find((e) => e.eventid === "mysql.login.success");
    expect(success).toMatchObject({ username: "root", password: "root", auth_plugin: "mysql_native_password", auth_switch: "caching_sha2_password" });
  });

  test("--default-auth=caching_sha2_password with a schema (-D): the schema is recorded and used, USE is COM_INIT_DB", async () => {
    const before = relay.all.length;
    const r = await mariadb(port, "--default-auth=caching_sha2_password", "-D", "wordpress", "-u", "root", "-p123456", "-N", "-e", "SELECT DATABASE(); SHOW TABLES LIKE 'wp_user%'; use mysql; SELECT DATABASE()");
    expect(r).toEqual({ code: 0, stdout: "wordpress\nwp_usermeta\nwp_users\nmysql\n", stderr: "" });
    const events = await sessionAfter(before);
    expect(events.find((e) => e.eventid === "mysql.login.success")).toMatchObject({ username: "root", password: "123456", database: "wordpress", auth_plugin: "caching_sha2_password" });
    expect(events.filter((e) => e.eventid === "mysql.command.input").map((e) => [e.command, e.input, e.database])).toEqual([
      ["query", "SELECT DATABASE()", "wordpress"],
      ["query", "SHOW TABLES LIKE 'wp_user%'", "wordpress"],
      // The client's `use` asks for the current schema first.
      ["query", "SELECT DATABASE()", "wordpress"],
      ["init_db", "USE mysql", "wordpress"],
      ["query", "SELECT DATABASE()", "mysql"],
    ]);
  });

  test("an unknown schema fails the login with 1049, the password known", async () => {
    const before = relay.all.length;
    const r = await mariadb(port, "-D", "payroll", "-u", "root", "-proot", "-e", "SELECT 1");
    expect(r.stderr).toBe("ERROR 1049 (42000): Unknown database 'payroll'\n");
    expect((await sessionAfter(before)).find((e) => e.eventid === "mysql.login.failed")).toMatchObject({ password: "root", database: "payroll", reason: "unknown_database" });
  });

  test("no password: root gets in (root: rule), another user is refused 'using password: NO'", async () => {
    let before = relay.all.length;
    expect(await mariadb(port, "-u", "root", "-N", "-e", "SELECT @@version_comment LIMIT 1")).toEqual({ code: 0, stdout: "MySQL Community Server - GPL\n", stderr: "" });
    expect((await sessionAfter(before)).find((e) => e.eventid === "mysql.login.success")).toMatchObject({ username: "root", password: "", password_source: "empty", auth_response: "" });
    before = relay.all.length;
    const r = await mariadb(port, "-u", "backup", "-e", "SELECT 1");
    expect(r.stderr).toBe("ERROR 1045 (28000): Access denied for user 'backup'@'localhost' (using password: NO)\n");
    expect((await sessionAfter(before)).find((e) => e.eventid === "mysql.login.failed")).toMatchObject({ username: "backup", password: "", password_source: "empty" });
  });

  test("queries after login get plausible answers and errors", async () => {
    const r = await mariadb(port, "-u", "root", "-proot", "-N", "-e", "SELECT user, host FROM mysql.user WHERE user = 'root'; SHOW VARIABLES LIKE 'hostname'; SELECT * FROM wordpress.wp_secrets");
    expect(r).toEqual({ code: 1, stdout: "root\t%\nroot\tlocalhost\nhostname\tdb01\n", stderr: "--------------\nSELECT * FROM wordpress.wp_secrets\n--------------\n\nERROR 1146 (42S02) at line 1: Table 'wordpress.wp_secrets' doesn't exist\n" });
  });
});

describe("with auth_plugin mysql_native_password", () => {
  test("clients log in with their default plugin; a failed login's password is found among the guesses, or stays unknown", async () => {
    const own = Relay.start();
    const native = await startPot("mysql", { mysql_port: "0", auth_plugin: "mysql_native_password" }, own);
    try {
      const target = native.ports.mysql;
      let before = own.all.length;
      expect((await mariadb(target, "-u", "root", "-proot", "-N", "-e", "SELECT @@default_authentication_plugin")).stdout).toBe("mysql_native_password\n");
      expect((await sessionAfter(before, own)).find((e) => e.eventid === "mysql.login.success")).toMatchObject({
        password: "root",
        password_source: "candidate",
        auth_plugin: "mysql_native_password",
        auth_switch: null,
        auth_response: HEX(20),
      });
      before = own.all.length;
      expect((await mariadb(target, "-u", "root", "-pdragon", "-e", "SELECT 1")).code).toBe(1);
      expect((await sessionAfter(before, own)).find((e) => e.eventid === "mysql.login.failed")).toMatchObject({ password: "dragon", password_source: "candidate" });
      before = own.all.length;
      expect((await mariadb(target, "-u", "root", "-pzq-not-a-guess", "-e", "SELECT 1")).code).toBe(1);
      expect((await sessionAfter(before, own)).find((e) => e.eventid === "mysql.login.failed")).toMatchObject({ password: null, password_source: null, reason: "denied" });
    } finally {
      await native.stop();
      own.stop();
      removeDir(native.dir);
    }
  });
});

describe("protocol edges", () => {
  test("a client that leaves during full authentication is recorded as a failed login", async () => {
    const before = relay.all.length;
    const raw = await RawMysql.connect(port);
    const greeting = decodeHandshake((await raw.packet())!.payload);
    const capabilities = CLIENT.PROTOCOL_41 | CLIENT.SECURE_CONNECTION | CLIENT.PLUGIN_AUTH;
    raw.send(1, encodeHandshakeResponse({ capabilities, maxPacket: 1 << 24, charset: 45, username: "sa", authResponse: sha2Response("unguessable-9", greeting.scramble), database: null, plugin: CACHING_SHA2, attrs: {} }));
    expect([...(await raw.packet())!.payload]).toEqual([1, 4]);
    raw.socket.end();
    const failed = (await sessionAfter(before)).find((e) => e.eventid === "mysql.login.failed");
    expect(failed).toMatchObject({ username: "sa", password: null, reason: "disconnected", scramble: greeting.scramble.toString("hex"), client_attrs: {} });
  });

  test("the commands besides COM_QUERY, and several statements in one query", async () => {
    const before = relay.all.length;
    const raw = await RawMysql.connect(port);
    await raw.login();
    const command = async (payload: Buffer) => {
      raw.send(0, payload);
      const first = (await raw.packet())!;
      expect(first.seq).toBe(1);
      return first.payload;
    };
    expect([...(await command(Buffer.from([0x0e])))]).toEqual([0, 0, 0, 2, 0, 0, 0]);
    expect((await command(Buffer.from([0x09]))).toString()).toStartWith("Uptime: ");
    expect([...(await command(Buffer.from("\x02wordpress", "latin1")))]).toEqual([0, 0, 0, 2, 0, 0, 0]);
    expect(decodeColumnName(await command(Buffer.from("\x04wp_terms\0", "latin1")))).toBe("term_id");
    const names = [];
    for (let p = await raw.packet(); p!.payload[0] !== 0xfe; p = await raw.packet()) names.push(decodeColumnName(p!.payload));
    expect(names).toEqual(["name", "slug", "term_group"]);
    expect((await command(Buffer.from([0x1b]))).subarray(3).toString()).toBe("#08S01Unknown command");

    // Without CLIENT_MULTI_STATEMENTS (this client did not ask for it) a second statement is a syntax error.
    expect((await command(Buffer.from("\x03SELECT 1; SELECT 2", "latin1"))).subarray(3).toString()).toStartWith("#42000You have an error in your SQL syntax");
    raw.send(0, Buffer.from([0x01]));
    await raw.closed;
    const inputs = (await sessionAfter(before)).filter((e) => e.eventid === "mysql.command.input").map((e) => [e.command, e.input]);
    expect(inputs).toEqual([
      ["init_db", "USE wordpress"],
      ["query", "SELECT 1; SELECT 2"],
    ]);

    // With it, one result set per statement, each but the last flagged SERVER_MORE_RESULTS_EXISTS;
    // with CLIENT_DEPRECATE_EOF, no EOF after the definitions and an OK headed 0xfe at the end.
    const multi = await RawMysql.connect(port);
    await multi.login(CLIENT.MULTI_STATEMENTS | CLIENT.MULTI_RESULTS | CLIENT.DEPRECATE_EOF);
    multi.send(0, Buffer.from("\x03SELECT 1; SELECT 'two'", "latin1"));
    const packets = [];
    for (let i = 0; i < 8; i++) packets.push((await multi.packet())!);
    expect(packets.map((p) => p.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(decodeRow(packets[2]!.payload, 1)).toEqual(["1"]);
    expect([...packets[3]!.payload]).toEqual([0xfe, 0, 0, 0x0a, 0, 0, 0]);
    expect(decodeColumnName(packets[5]!.payload)).toBe("two");
    expect([...packets[7]!.payload]).toEqual([0xfe, 0, 0, 0x02, 0, 0, 0]);
    multi.socket.destroy();
  });

  test("nmap -sV names MySQL and its version", async () => {
    const r = await run(["nmap", "-sV", "-Pn", "-p", String(port), "127.0.0.1"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${port}/tcp\\s+open\\s+mysql\\s+MySQL 8\\.0\\.39$`, "m"));
    expect(r.stdout).not.toContain("SF-Port");
  }, 180_000);
});

describe("hostile input", () => {
  test("floods and a connection storm leave the pot up, bounded, and recording", async () => {
    const rssBefore = rssKb(pot.proc.pid);
    // A real client logged in before the storm and still talking after it.
    const duringBefore = relay.all.length;
    const during = Bun.spawn(["mariadb", "--no-defaults", "-h", "127.0.0.1", "-P", String(port), "-u", "root", "-proot", "-N"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    during.stdin.write("SELECT 'during-1';\n");
    during.stdin.flush();
    const first = await relay.next((e) => e.eventid === "mysql.command.input" && e.input === "SELECT 'during-1'" && relay.all.indexOf(e) >= duringBefore);

    // Garbage before the login: a header announcing the largest packet taken, then megabytes more.
    const garbage = await RawMysql.connect(port);
    await garbage.packet();
    const junk = Buffer.alloc(64 * 1024, 0x41);
    junk.writeUIntLE(1024 * 1024, 0, 3);
    await garbage.flood(junk, 16 * 1024 * 1024);
    await garbage.closed;

    // After a login: a packet announced past max_packet is refused with mysqld's 1153 at once.
    const big = await RawMysql.connect(port);
    await big.login();
    await big.flood(Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0]), Buffer.alloc(64 * 1024 - 4, 3)]), 6 * 1024 * 1024);
    const err = await big.packet();
    expect(err!.payload.subarray(0, 3)).toEqual(Buffer.from([0xff, 0x81, 0x04]));
    expect(err!.payload.subarray(3).toString()).toBe("#08S01Got a packet bigger than 'max_allowed_packet' bytes");
    await big.closed;

    // Well-formed queries past the 8 MiB a connection may send: each recorded (cut at 16384
    // characters) until the budget is spent, then the connection is dropped.
    const chattyBefore = relay.all.length;
    const chatty = await RawMysql.connect(port);
    await chatty.login();
    const query = frame(0, Buffer.concat([Buffer.from("\x03SELECT 1 -- ", "latin1"), Buffer.alloc(512 * 1024, 0x78)]));
    await chatty.flood(query, 24 * query.length);
    await chatty.closed;
    const inputs = (await sessionAfter(chattyBefore)).filter((e) => e.eventid === "mysql.command.input");
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.length).toBeLessThanOrEqual(16);
    expect(inputs[0]).toMatchObject({ truncated: true, length: 12 + 512 * 1024 });
    expect(inputs[0].input.length).toBe(16384);

    // A storm past max_connections (20): the excess is closed at once, the rest are greeted.
    const storm = await Promise.all(Array.from({ length: 60 }, () => RawMysql.connect(port)));
    const greeted = await Promise.all(storm.map(async (c) => (await c.packet()) !== null));
    expect(greeted.filter(Boolean).length).toBeLessThanOrEqual(20);
    expect(greeted.filter((g) => !g).length).toBeGreaterThanOrEqual(40);
    for (const c of storm) c.socket.destroy();
    await Promise.all(storm.map((c) => c.closed));

    expect(pot.proc.exitCode).toBeNull();
    const rssAfter = rssKb(pot.proc.pid);
    console.log(`mysql pot RSS: ${rssBefore} kB before, ${rssAfter} kB after the floods`);
    expect(rssAfter).toBeLessThan(150 * 1024);

    during.stdin.write("SELECT 'during-2';\n");
    during.stdin.end();
    expect(await during.exited).toBe(0);
    expect(await new Response(during.stdout).text()).toBe("during-1\nduring-2\n");
    await relay.event("mysql.session.closed", { session: first.session });
    expect(relay.session(first.session).map((e) => e.eventid)).toEqual(["mysql.session.connect", "mysql.login.success", "mysql.command.input", "mysql.command.input", "mysql.session.closed"]);

    const after = relay.all.length;
    expect((await mariadb(port, "-u", "root", "-proot", "-N", "-e", "SELECT 'after'")).stdout).toBe("after\n");
    expect((await sessionAfter(after)).map((e) => e.eventid)).toEqual(["mysql.session.connect", "mysql.login.success", "mysql.command.input", "mysql.session.closed"]);
  }, 120_000);
});
