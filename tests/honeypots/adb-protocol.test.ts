import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { FEATURES } from "../../src/honeypots/adb/device";
import { checksum, cString, deviceBanner, encode, HEADER_SIZE, MessageDecoder, parseIdentity, ProtocolError, publicKeyInfo } from "../../src/honeypots/adb/protocol";
import { ShellPacketDecoder, shellPacket } from "../../src/honeypots/adb/shell-protocol";
import { dent, dentDone, fail, okay, SyncDecoder, splitSendSpec, statV1, statV2 } from "../../src/honeypots/adb/sync-protocol";

/** nmap 7.93's adbConnect probe, byte for byte (nmap-service-probes). */
const NMAP_PROBE = Buffer.from("CNXN\0\0\0\x01\0\x10\0\0\x07\0\0\0\x32\x02\0\0\xbc\xb1\xa7\xb1host::\0", "latin1");
/** nmap's match line for a device banner with features, copied from nmap-service-probes. */
const NMAP_PATTERN = String.raw`^CNXN\0\0\0\x01\0\x10\0\0........\xbc\xb1\xa7\xb1(\w+)::ro.product.name=([^;]+);ro.product.model=([^;]+);ro.product.device=([^;]+);features=([^\0]+)$`;
const NMAP_MATCH = new RegExp(NMAP_PATTERN, "s");

describe("adb messages", () => {
  test("encode lays out the 24-byte header, magic and optional byte-sum checksum", () => {
    const data = Buffer.from("host::\0");
    const plain = encode("CNXN", 0x01000001, 256 * 1024, data);
    expect(plain.length).toBe(HEADER_SIZE + data.length);
    expect(plain.toString("latin1", 0, 4)).toBe("CNXN");
    expect([plain.readUInt32LE(4), plain.readUInt32LE(8), plain.readUInt32LE(12), plain.readUInt32LE(16)]).toEqual([0x01000001, 262144, 7, 0]);
    expect(plain.readUInt32LE(20)).toBe((0x4e584e43 ^ 0xffffffff) >>> 0);
    expect(encode("CNXN", 0x01000000, 4096, data, true).readUInt32LE(16)).toBe(checksum(data));
    expect(checksum(data)).toBe(0x232);
  });

  test("nmap's probe decodes to a version 0x01000000 CNXN with maxdata 4096", () => {
    expect(new MessageDecoder().push(NMAP_PROBE)).toEqual([{ command: "CNXN", arg0: 0x01000000, arg1: 4096, data: Buffer.from("host::\0") }]);
  });

  test("the reply to nmap's probe matches nmap's Android Debug Bridge signature", () => {
    const banner = deviceBanner({ name: "sunfish", model: "Pixel 4a", device: "sunfish" }, FEATURES);
    const reply = encode("CNXN", 0x01000000, 4096, Buffer.from(banner), true).toString("latin1");
    expect(NMAP_MATCH.exec(reply)?.slice(1)).toEqual(["device", "sunfish", "Pixel 4a", "sunfish", FEATURES.join(",")]);
  });

  test("messages split anywhere, or several in one chunk, come out whole", () => {
    const bytes = Buffer.concat([encode("OPEN", 1, 0, Buffer.from("shell:id\0")), encode("OKAY", 7, 1), encode("WRTE", 1, 7, Buffer.alloc(70000, 0x61))]);
    const byteWise = new MessageDecoder();
    const got = [...bytes].flatMap((b) => byteWise.push(Uint8Array.of(b)));
    const whole = new MessageDecoder().push(bytes);
    for (const messages of [got, whole]) {
      expect(messages.map((m) => [m.command, m.arg0, m.arg1, m.data.length])).toEqual([
        ["OPEN", 1, 0, 9],
        ["OKAY", 7, 1, 0],
        ["WRTE", 1, 7, 70000],
      ]);
    }
  });

  test("a wrong data_check is taken: modern adb sends 0, old adb the byte sum", () => {
    const m = encode("WRTE", 1, 2, Buffer.from("abc"));
    m.writeUInt32LE(12345, 16);
    expect(new MessageDecoder().push(m)).toHaveLength(1);
  });

  test("bad framing throws: unknown command at its first byte, bad magic, data over maxdata", () => {
    expect(() => new MessageDecoder().push(Buffer.from("G"))).toThrow(ProtocolError);
    expect(() => new MessageDecoder().push(Buffer.from("CNXX"))).toThrow(ProtocolError);
    const badMagic = encode("OKAY", 1, 2);
    badMagic.writeUInt32LE(0, 20);
    expect(() => new MessageDecoder().push(badMagic)).toThrow("bad magic");
    const huge = encode("WRTE", 1, 2);
    huge.writeUInt32LE(0x7fffffff, 12);
    expect(() => new MessageDecoder(4096).push(huge)).toThrow("over 4096");
    // A prefix of a real command is waited on.
    expect(new MessageDecoder().push(Buffer.from("CN"))).toEqual([]);
  });

  test("identities and C strings", () => {
    expect(parseIdentity("host::features=shell_v2,cmd")).toEqual({ systemType: "host", serial: "", props: { features: "shell_v2,cmd" } });
    expect(parseIdentity("device::ro.product.name=a;ro.product.model=b;features=x").props).toEqual({ "ro.product.name": "a", "ro.product.model": "b", features: "x" });
    expect(parseIdentity("host")).toEqual({ systemType: "host", serial: "", props: {} });
    expect(cString(Buffer.from("abc\0def"))).toBe("abc");
  });

  test("a public key's fingerprint is Android's: MD5 of the decoded key, upper-case, colon-separated", () => {
    const raw = Buffer.from("not really an RSA key but bytes all the same");
    const md5 = createHash("md5").update(raw).digest("hex").toUpperCase();
    const info = publicKeyInfo(Buffer.from(`${raw.toString("base64")} root@kali\0`));
    expect(info).toEqual({ key: raw.toString("base64"), comment: "root@kali", fingerprint: md5.match(/../g)!.join(":") });
    expect(publicKeyInfo(Buffer.from("%%% x")).fingerprint).toBeNull();
  });
});

describe("shell protocol packets", () => {
  test("round trip, split across chunks", () => {
    const bytes = Buffer.concat([shellPacket(0, "ls\n"), shellPacket(4, ""), shellPacket(3, Buffer.of(7))]);
    const decoder = new ShellPacketDecoder(1024);
    const packets = [bytes.subarray(0, 3), bytes.subarray(3, 11), bytes.subarray(11)].flatMap((c) => decoder.push(c) ?? []);
    expect(packets.map((p) => [p.id, p.data.toString("latin1")])).toEqual([
      [0, "ls\n"],
      [4, ""],
      [3, "\x07"],
    ]);
  });

  test("a packet longer than the bound is refused", () => {
    const header = Buffer.of(0, 0, 0, 0x10, 0);
    expect(new ShellPacketDecoder(1024).push(header)).toBeNull();
  });
});

function syncRequest(id: string, payload: Buffer | string): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const head = Buffer.alloc(8);
  head.write(id, 0, "latin1");
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

describe("sync protocol", () => {
  test("SEND, DATA chunks and DONE, fed a byte at a time", () => {
    const done = Buffer.alloc(8);
    done.write("DONE", 0, "latin1");
    done.writeUInt32LE(1700000000, 4);
    const bytes = Buffer.concat([syncRequest("STA2", "/data/local/tmp/x"), syncRequest("SEND", "/data/local/tmp/x,33261"), syncRequest("DATA", "hello "), syncRequest("DATA", "world"), done, syncRequest("QUIT", "")]);
    const decoder = new SyncDecoder();
    const got = [...bytes].flatMap((b) => decoder.push(Uint8Array.of(b)));
    expect(got).toEqual([
      { type: "request", id: "STA2", path: "/data/local/tmp/x" },
      { type: "request", id: "SEND", path: "/data/local/tmp/x,33261" },
      { type: "data", bytes: Buffer.from("hello ") },
      { type: "data", bytes: Buffer.from("world") },
      { type: "done", mtime: 1700000000 },
      { type: "request", id: "QUIT", path: "" },
    ]);
  });

  test("SND2 and RCV2 take their setup packet", () => {
    const setup = Buffer.alloc(12);
    setup.write("SND2", 0, "latin1");
    setup.writeUInt32LE(0o100755, 4);
    setup.writeUInt32LE(4, 8);
    const recv = Buffer.alloc(8);
    recv.write("RCV2", 0, "latin1");
    expect(new SyncDecoder().push(Buffer.concat([syncRequest("SND2", "/x"), setup]))).toEqual([{ type: "send2", path: "/x", mode: 0o100755, flags: 4 }]);
    expect(new SyncDecoder().push(Buffer.concat([syncRequest("RCV2", "/y"), recv]))).toEqual([{ type: "recv2", path: "/y", flags: 0 }]);
  });

  test("broken requests end in a fail, and nothing after it is read", () => {
    expect(new SyncDecoder().push(syncRequest("STAT", "x".repeat(1025)))).toEqual([{ type: "fail", message: "path too long" }]);
    expect(new SyncDecoder().push(syncRequest("HACK", "/"))).toEqual([{ type: "fail", message: "unknown command 4b434148" }]);
    const decoder = new SyncDecoder();
    const oversize = Buffer.alloc(8);
    oversize.write("DATA", 0, "latin1");
    oversize.writeUInt32LE(64 * 1024 + 1, 4);
    expect(decoder.push(Buffer.concat([syncRequest("SEND", "/a,420"), oversize]))).toEqual([
      { type: "request", id: "SEND", path: "/a,420" },
      { type: "fail", message: "oversize data message" },
    ]);
    expect(decoder.push(syncRequest("STAT", "/"))).toEqual([]);
    expect(new SyncDecoder().push(Buffer.concat([syncRequest("SEND", "/a,420"), syncRequest("STAT", "/")]))[1]).toEqual({ type: "fail", message: "invalid data message" });
  });

  test("SEND's path and mode, as strtoul(base 0) reads the mode", () => {
    expect(splitSendSpec("/data/local/tmp/x,33188")).toEqual({ path: "/data/local/tmp/x", mode: 0o100644 });
    expect(splitSendSpec("/sdcard/a,b,0755")).toEqual({ path: "/sdcard/a,b", mode: 0o755 });
    expect(splitSendSpec("/x,0x1ed")).toEqual({ path: "/x", mode: 0o755 });
    expect(splitSendSpec("/x")).toBeNull();
    expect(splitSendSpec("/x,rwx")).toBeNull();
  });

  test("answers have adbd's sizes", () => {
    const st = { mode: 0o100644, size: 5, mtime: 1, uid: 2000, gid: 2000, nlink: 1, ino: 9 };
    expect([okay().length, fail("nope").length, statV1(st).length, statV1(null).length, statV2("STA2", st).length, dent("ab", st, false).length, dent("ab", st, true).length, dentDone(false).length, dentDone(true).length]).toEqual([
      8, 12, 16, 16, 72, 22, 78, 20, 76,
    ]);
    const missing = statV2("LST2", null);
    expect([missing.toString("latin1", 0, 4), missing.readUInt32LE(4), missing.readUInt32LE(24)]).toEqual(["LST2", 2, 0]);
    const found = statV2("STA2", st);
    expect([found.readUInt32LE(4), found.readUInt32LE(24), Number(found.readBigUInt64LE(40))]).toEqual([0, 0o100644, 5]);
    expect(statV1(null).subarray(4)).toEqual(Buffer.alloc(12));
  });
});
