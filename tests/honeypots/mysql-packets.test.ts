import { describe, expect, test } from "bun:test";
import { constants, createHash, generateKeyPairSync, publicEncrypt } from "node:crypto";
import {
  Accounts,
  CACHING_SHA2,
  decryptPassword,
  NATIVE,
  nativeResponse,
  newScramble,
  sha2Response,
  xorPassword,
} from "../../src/honeypots/mysql/auth";
import { decodeHandshake, decodeHandshakeResponse, encodeAuthMoreData, encodeAuthSwitch, encodeHandshake, encodeHandshakeResponse, MAX_ATTRS } from "../../src/honeypots/mysql/handshake";
import {
  CLIENT,
  DecodeError,
  decodeColumnName,
  decodeCommand,
  decodeRow,
  encodeEof,
  encodeErr,
  encodeOk,
  encodeResultSet,
  frame,
  lenencInt,
  lenencStr,
  Reader,
  readPackets,
  SERVER_CAPABILITIES,
  TYPE,
} from "../../src/honeypots/mysql/packets";

const sha1 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash("sha1")).digest();
const sha256 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash("sha256")).digest();
const xor = (a: Buffer, b: Buffer) => Buffer.from(a.map((x, i) => x ^ b[i]!));

const SCRAMBLE = Buffer.from("0123456789abcdefghij");

/** What Connector/C sends: mariadb 10.11's client, with its attributes. */
const MARIADB_HELLO = {
  capabilities: 0x00bea285 | CLIENT.CONNECT_WITH_DB,
  maxPacket: 16777216,
  charset: 45,
  username: "root",
  authResponse: Buffer.alloc(32, 7),
  database: "wordpress",
  plugin: CACHING_SHA2,
  attrs: { _os: "Linux", _client_name: "libmariadb", _pid: "4242", _client_version: "3.3.20", _platform: "x86_64", program_name: "mysql", _server_host: "127.0.0.1" },
};

describe("packet framing", () => {
  test("frames carry a 3-byte little-endian length and the sequence id", () => {
    expect([...frame(3, Buffer.from("abc"))]).toEqual([3, 0, 0, 3, 0x61, 0x62, 0x63]);
    expect([...frame(0, Buffer.alloc(0x10203)).subarray(0, 4)]).toEqual([3, 2, 1, 0]);
  });

  test("whole packets are split off, a partial one waits", () => {
    const bytes = Buffer.concat([frame(0, Buffer.from("one")), frame(1, Buffer.from("two")), frame(2, Buffer.from("three")).subarray(0, 6)]);
    const { packets, used, tooLong } = readPackets(bytes, 1024);
    expect(packets.map((p) => [p.seq, p.payload.toString()])).toEqual([
      [0, "one"],
      [1, "two"],
    ]);
    expect(used).toBe(14);
    expect(tooLong).toBe(false);
  });

  test("a header announcing more than the limit is refused before its payload arrives", () => {
    const header = Buffer.from([0xff, 0xff, 0xff, 0]);
    expect(readPackets(Buffer.concat([frame(0, Buffer.from("ok")), header]), 1 << 20)).toMatchObject({ used: 6, tooLong: true });
    expect(readPackets(Buffer.from([1, 0, 16, 0]), 1 << 20).tooLong).toBe(true);
  });

  test("length-encoded integers at every width", () => {
    for (const n of [0, 250, 251, 0xffff, 0x10000, 0xffffff, 0x1000000, 2 ** 40]) {
      expect(new Reader(lenencInt(n)).lenenc()).toBe(n);
    }
    expect([...lenencInt(251)]).toEqual([0xfc, 251, 0]);
    expect([...lenencStr("hi")]).toEqual([2, 0x68, 0x69]);
    expect(() => new Reader(Buffer.from([0xff])).lenenc()).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0xfc, 1])).lenenc()).toThrow(DecodeError);
  });
});

describe("the greeting", () => {
  const greeting = encodeHandshake({ version: "8.0.39", connectionId: 4711, scramble: SCRAMBLE, capabilities: SERVER_CAPABILITIES, status: 2, plugin: CACHING_SHA2 });

  test("is a v10 handshake that reads back whole", () => {
    expect(decodeHandshake(greeting)).toEqual({ version: "8.0.39", connectionId: 4711, scramble: SCRAMBLE, capabilities: SERVER_CAPABILITIES, status: 2, plugin: CACHING_SHA2 });
    // The length of the auth data, with its NUL, is what Connector/C hands the plugin.
    expect(greeting[greeting.indexOf(0) + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2]).toBe(21);
  });

  test("offers what a MySQL 8.0 server without TLS offers", () => {
    for (const flag of [CLIENT.PROTOCOL_41, CLIENT.SECURE_CONNECTION, CLIENT.PLUGIN_AUTH, CLIENT.CONNECT_ATTRS, CLIENT.PLUGIN_AUTH_LENENC_CLIENT_DATA, CLIENT.CONNECT_WITH_DB, CLIENT.DEPRECATE_EOF, CLIENT.MULTI_STATEMENTS]) {
      expect(SERVER_CAPABILITIES & flag).toBe(flag);
    }
    expect(SERVER_CAPABILITIES & CLIENT.SSL).toBe(0);
    expect(SERVER_CAPABILITIES & CLIENT.COMPRESS).toBe(0);
  });

  test("matches nmap's MySQL 8 signature", () => {
    // nmap-service-probes' line for MySQL 8, whose signature is made of NUL bytes.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the bytes nmap matches
    const signature = /^.\0\0\0\x0a(8\.[-_~.+\w]+)\0...\0/s;
    expect(frame(0, greeting).toString("latin1")).toMatch(signature);
  });

  test("scrambles are 20 bytes of 1-127 without `$`", () => {
    expect([...newScramble(() => new Uint8Array(20).fill(0))]).toEqual(new Array(20).fill(1));
    expect([...newScramble(() => new Uint8Array(20).fill(0xa4))]).toEqual(new Array(20).fill(0x25));
    for (let i = 0; i < 50; i++) {
      const s = newScramble();
      expect(s.length).toBe(20);
      expect(s.every((b) => b >= 1 && b <= 127 && b !== 0x24)).toBe(true);
    }
  });
});

describe("the client's handshake response", () => {
  test("names the user, schema, plugin and attributes", () => {
    expect(decodeHandshakeResponse(encodeHandshakeResponse(MARIADB_HELLO))).toEqual(MARIADB_HELLO);
  });

  test("reads a response byte for byte as a client writes it", () => {
    const bytes = Buffer.concat([
      Buffer.from([0x85, 0xa6, 0x0f, 0x00]), // LONG_PASSWORD|LONG_FLAG|LOCAL_FILES|PROTOCOL_41|TRANSACTIONS|SECURE_CONNECTION|MULTI_*|PLUGIN_AUTH
      Buffer.from([0, 0, 0, 1]),
      Buffer.from([33]),
      Buffer.alloc(23),
      Buffer.from("admin\0"),
      Buffer.from([20]),
      Buffer.alloc(20, 0xab),
      Buffer.from("mysql_native_password\0"),
    ]);
    expect(decodeHandshakeResponse(bytes)).toEqual({
      capabilities: 0x000fa685,
      maxPacket: 16777216,
      charset: 33,
      username: "admin",
      authResponse: Buffer.alloc(20, 0xab),
      database: null,
      plugin: NATIVE,
      attrs: {},
    });
  });

  test("short or pre-4.1 responses are refused, and attributes are bounded", () => {
    const whole = encodeHandshakeResponse(MARIADB_HELLO);
    for (const cut of [3, 20, 36, 40, whole.length - 5]) expect(() => decodeHandshakeResponse(whole.subarray(0, cut))).toThrow(DecodeError);
    expect(() => decodeHandshakeResponse(Buffer.from([0x85, 0x00, 0, 0, 0, 0, 0, 1]))).toThrow("pre-4.1");
    const attrs = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, "v".repeat(3000)]));
    const many = decodeHandshakeResponse(encodeHandshakeResponse({ ...MARIADB_HELLO, attrs }));
    expect(Object.keys(many.attrs).length).toBe(MAX_ATTRS);
    expect(many.attrs.k0!.length).toBe(1024);
  });

  test("an attribute named __proto__ stays an attribute", () => {
    const hello = decodeHandshakeResponse(encodeHandshakeResponse({ ...MARIADB_HELLO, attrs: JSON.parse('{"__proto__": "x", "constructor": "y"}') }));
    expect(Object.entries(hello.attrs)).toEqual([
      ["__proto__", "x"],
      ["constructor", "y"],
    ]);
  });
});

describe("server packets", () => {
  test("OK, ERR and EOF byte for byte", () => {
    expect([...encodeOk({ status: 2 })]).toEqual([0, 0, 0, 2, 0, 0, 0]);
    expect([...encodeOk({ affectedRows: 3, status: 0x0a, eof: true })]).toEqual([0xfe, 3, 0, 0x0a, 0, 0, 0]);
    expect(encodeErr(1045, "28000", "Access denied")).toEqual(Buffer.concat([Buffer.from([0xff, 0x15, 0x04]), Buffer.from("#28000Access denied")]));
    expect([...encodeEof(2)]).toEqual([0xfe, 0, 0, 2, 0]);
  });

  test("AuthSwitchRequest and AuthMoreData", () => {
    expect(encodeAuthSwitch(CACHING_SHA2, SCRAMBLE)).toEqual(Buffer.concat([Buffer.from([0xfe]), Buffer.from(`${CACHING_SHA2}\0`), SCRAMBLE, Buffer.from([0])]));
    expect([...encodeAuthMoreData(Buffer.from([4]))]).toEqual([1, 4]);
  });

  test("a text result set: count, definitions, EOF, rows, EOF (or a closing OK without EOF)", () => {
    const columns = [
      { name: "Database", type: TYPE.VAR_STRING },
      { name: "n", type: TYPE.LONGLONG },
    ];
    const set = encodeResultSet(columns, [["mysql", "1"], [null, "2"]], 2, false);
    expect(set.length).toBe(7);
    expect([...set[0]!]).toEqual([2]);
    expect(set.slice(1, 3).map(decodeColumnName)).toEqual(["Database", "n"]);
    expect(set[3]).toEqual(encodeEof(2));
    expect(decodeRow(set[4]!, 2)).toEqual(["mysql", "1"]);
    expect(decodeRow(set[5]!, 2)).toEqual([null, "2"]);
    expect(set[6]).toEqual(encodeEof(2));
    const lean = encodeResultSet(columns, [], 2, true);
    expect(lean.length).toBe(4);
    expect(lean[3]).toEqual(encodeOk({ status: 2, eof: true }));
  });

  test("commands", () => {
    expect(decodeCommand(Buffer.from("\x03SELECT 1", "latin1"))).toEqual({ kind: "query", sql: Buffer.from("SELECT 1") });
    expect(decodeCommand(Buffer.from("\x02wordpress", "latin1"))).toEqual({ kind: "init_db", schema: Buffer.from("wordpress") });
    expect(decodeCommand(Buffer.from("\x04wp_users\0%", "latin1"))).toEqual({ kind: "field_list", table: Buffer.from("wp_users"), wildcard: Buffer.from("%") });
    expect(decodeCommand(Buffer.from([1]))).toEqual({ kind: "quit" });
    expect(decodeCommand(Buffer.from([0x0e]))).toEqual({ kind: "ping" });
    expect(decodeCommand(Buffer.from([0x99]))).toEqual({ kind: "unknown", code: 0x99 });
    expect(() => decodeCommand(Buffer.alloc(0))).toThrow(DecodeError);
  });
});

describe("scramble verification", () => {
  test("mysql_native_password: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))", () => {
    const stage1 = sha1(Buffer.from("hunter2"));
    const expected = xor(stage1, sha1(SCRAMBLE, sha1(stage1)));
    expect(nativeResponse("hunter2", SCRAMBLE)).toEqual(expected);
    expect(nativeResponse("", SCRAMBLE)).toEqual(Buffer.alloc(0));
  });

  test("caching_sha2_password: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble)", () => {
    const stage1 = sha256(Buffer.from("hunter2"));
    const expected = xor(stage1, sha256(sha256(stage1), SCRAMBLE));
    expect(sha2Response("hunter2", SCRAMBLE)).toEqual(expected);
  });

  test("a login is let in by the first rule whose password matches the answer", () => {
    const accounts = new Accounts("root:!toor,root:root,admin:*,guest:", ["dragon"]);
    const native = (pw: string) => ({ plugin: NATIVE, scramble: SCRAMBLE, response: nativeResponse(pw, SCRAMBLE) });
    const sha2 = (pw: string) => ({ plugin: CACHING_SHA2, scramble: SCRAMBLE, response: sha2Response(pw, SCRAMBLE) });
    expect(accounts.allows("root", native("root"))).toBe(true);
    expect(accounts.allows("root", sha2("root"))).toBe(true);
    expect(accounts.allows("root", native("toor"))).toBe(false);
    expect(accounts.allows("root", native("hunter2"))).toBe(false);
    expect(accounts.allows("admin", native("anything at all"))).toBe(true);
    expect(accounts.allows("guest", native(""))).toBe(true);
    expect(accounts.allows("guest", native("x"))).toBe(false);
    expect(accounts.allows("root", { cleartext: "root" })).toBe(true);
    expect(accounts.allows("root", { cleartext: "toor" })).toBe(false);

    expect(accounts.recover("root", native("toor"))).toEqual({ password: "toor", source: "candidate" });
    expect(accounts.recover("root", sha2("root"))).toEqual({ password: "root", source: "candidate" });
    expect(accounts.recover("nobody", native("dragon"))).toEqual({ password: "dragon", source: "candidate" });
    expect(accounts.recover("root", native("not in any list"))).toEqual({ password: null, source: null });
    expect(accounts.recover("root", native(""))).toEqual({ password: "", source: "empty" });
    // A 20-byte answer is no caching_sha2_password answer, and the other way round.
    expect(accounts.allows("root", { plugin: CACHING_SHA2, scramble: SCRAMBLE, response: nativeResponse("root", SCRAMBLE) })).toBe(false);
    expect(accounts.allows("root", { plugin: NATIVE, scramble: SCRAMBLE, response: Buffer.alloc(20) })).toBe(false);
  });

  test("full authentication: RSA-OAEP of the password XOR the scramble decrypts to the password", () => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const encrypted = publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING }, xorPassword("s3cr3t-Pässword", SCRAMBLE));
    expect(encrypted.length).toBe(256);
    expect(decryptPassword(pem, encrypted, SCRAMBLE)).toBe("s3cr3t-Pässword");
    expect(decryptPassword(privateKey, encrypted, SCRAMBLE)).toBe("s3cr3t-Pässword");
    expect(decryptPassword(pem, Buffer.alloc(256, 1), SCRAMBLE)).toBeNull();
    expect(decryptPassword(pem, Buffer.from("short"), SCRAMBLE)).toBeNull();
  });
});
