import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KexInitReader, MAX_PREFIX, parseKexInitPayload, readClientKexInit } from "../../src/honeypots/cowrie/kexinit";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "../helpers/clients";
import { RawClient, Relay, removeDir, run, startPot, type Pot } from "./harness";

const md5 = (text: string) => createHash("md5").update(text).digest("hex");
const SAMPLE = join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl");

const sampleEvents = (): any[] => readFileSync(SAMPLE, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

type Lists = [kex: string, hostKey: string, encCS: string, encSC: string, macCS: string, macSC: string, compCS: string, compSC: string, langCS: string, langSC: string];

const u32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

/** SSH_MSG_KEXINIT's payload, byte by byte: message number, cookie, ten name-lists, first_kex_packet_follows, reserved. */
function kexinitPayload(lists: Lists): number[] {
  const bytes = [20, ...Array.from({ length: 16 }, (_, i) => i * 7)];
  for (const list of lists) bytes.push(...u32(list.length), ...Buffer.from(list, "latin1"));
  return [...bytes, 0, ...u32(0)];
}

/** The packet around a payload: packet_length, padding_length, payload, padding to a multiple of 8. */
function packet(payload: number[]): number[] {
  let padding = 8 - ((4 + 1 + payload.length) % 8);
  if (padding < 4) padding += 8;
  return [...u32(1 + payload.length + padding), padding, ...payload, ...Array(padding).fill(0)];
}

const OPENSSH_LIKE: Lists = [
  "curve25519-sha256,diffie-hellman-group14-sha256,ext-info-c",
  "ssh-ed25519,rsa-sha2-512",
  "aes128-ctr,aes256-gcm@openssh.com",
  "aes128-ctr",
  "hmac-sha2-256-etm@openssh.com,hmac-sha2-256",
  "hmac-sha2-256",
  "none,zlib@openssh.com",
  "none",
  "",
  "",
];

function clientStart(lists: Lists, before = ""): Uint8Array {
  return Uint8Array.from([...Buffer.from(`${before}SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6\r\n`), ...packet(kexinitPayload(lists))]);
}

describe("the client's KEXINIT, read from its first bytes", () => {
  const want = {
    hassh: md5("curve25519-sha256,diffie-hellman-group14-sha256,ext-info-c;aes128-ctr,aes256-gcm@openssh.com;hmac-sha2-256-etm@openssh.com,hmac-sha2-256;none,zlib@openssh.com"),
    hasshAlgorithms: "curve25519-sha256,diffie-hellman-group14-sha256,ext-info-c;aes128-ctr,aes256-gcm@openssh.com;hmac-sha2-256-etm@openssh.com,hmac-sha2-256;none,zlib@openssh.com",
    kexAlgs: ["curve25519-sha256", "diffie-hellman-group14-sha256", "ext-info-c"],
    keyAlgs: ["ssh-ed25519", "rsa-sha2-512"],
    encCS: ["aes128-ctr", "aes256-gcm@openssh.com"],
    macCS: ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-256"],
    compCS: ["none", "zlib@openssh.com"],
    langCS: [""],
  };

  test("identification line and packet in one piece, or a byte at a time", () => {
    const bytes = clientStart(OPENSSH_LIKE);
    expect(readClientKexInit(bytes)).toEqual({ status: "done", kex: want });
    const reader = new KexInitReader();
    const got = Array.from(bytes, (b) => reader.feed(Uint8Array.of(b)));
    expect(got.slice(0, -1).every((k) => k === null)).toBe(true);
    expect(got.at(-1)).toEqual(want);
    expect(reader.done).toBe(true);
    expect(reader.feed(bytes)).toBeNull();
  });

  test("what follows the packet is ignored; lines before the identification are skipped", () => {
    const bytes = clientStart(OPENSSH_LIKE, "hello\r\nthere\n");
    expect(readClientKexInit(Uint8Array.from([...bytes, 0, 0, 0, 12, 1, 2, 3]))).toEqual({ status: "done", kex: want });
    expect(readClientKexInit(bytes.subarray(0, bytes.length - 1))).toEqual({ status: "more" });
  });

  test("Cowrie 2.9's own event: the same lists give its hassh", () => {
    const sample = sampleEvents().find((e) => e.eventid === "cowrie.client.kex");
    const lists: Lists = [sample.kexAlgs.join(","), sample.keyAlgs.join(","), sample.encCS.join(","), "aes128-ctr", sample.macCS.join(","), "hmac-sha1", sample.compCS.join(","), "none", sample.langCS.join(","), ""];
    const kex = parseKexInitPayload(Uint8Array.from(kexinitPayload(lists)));
    const { hassh, hasshAlgorithms, kexAlgs, keyAlgs, encCS, macCS, compCS, langCS } = sample;
    expect(kex).toEqual({ hassh, hasshAlgorithms, kexAlgs, keyAlgs, encCS, macCS, compCS, langCS });
    expect(hassh).toBe("472b5de333ad665af5cbf10ff892c4df");
  });

  test("anything malformed is given up on, never thrown", () => {
    const payload = kexinitPayload(OPENSSH_LIKE);
    const ident = [...Buffer.from("SSH-2.0-x\r\n")];
    const give = (bytes: number[]) => readClientKexInit(Uint8Array.from(bytes)).status;
    expect(give([...ident, ...packet([21, ...payload.slice(1)])])).toBe("failed"); // not KEXINIT
    expect(give([...ident, ...packet(payload.slice(0, 40))])).toBe("failed"); // a name-list past the payload
    expect(give([...ident, ...u32(35001), 4, 20])).toBe("failed"); // longer than any packet may be
    expect(give([...ident, ...u32(8), 9, 20, 0, 0, 0, 0, 0, 0, 0])).toBe("failed"); // padding longer than the packet
    expect(give(Array(MAX_PREFIX).fill(0x41))).toBe("failed"); // no line end in 35000 bytes
    expect(give([...ident, ...u32(64)])).toBe("more");
    const reader = new KexInitReader();
    for (let i = 0; i < 40; i++) expect(reader.feed(Buffer.alloc(1000, 0x41))).toBeNull();
    expect(reader.done).toBe(true);
  });

  test("non-ASCII names stay data, and the hassh is the MD5 of the text it names", () => {
    const lists = [...OPENSSH_LIKE] as Lists;
    lists[0] = "k\u00e9x,\u0000x";
    const kex = parseKexInitPayload(Uint8Array.from(kexinitPayload(lists)))!;
    expect(kex.kexAlgs).toEqual(["k\ufffdx", "\u0000x"]);
    expect(kex.hassh).toBe(md5(kex.hasshAlgorithms));
  });
});

describe("cowrie.client.kex from OpenSSH", () => {
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

  /** One refused password login with OpenSSH; its session's events once it closed. */
  async function attempt(password: string, extra: string[] = []): Promise<any[]> {
    const argv = [requireTool("ssh"), ...SSH_PASSWORD_OPTS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password", ...extra, "-p", String(pot.ports.ssh), "root@127.0.0.1", "id"];
    const r = await run(argv, undefined, sshPasswordEnv(password));
    expect(r.stderr).toContain("Permission denied");
    const failed = await relay.event("cowrie.login.failed", { password });
    await relay.event("cowrie.session.closed", { session: failed.session });
    return relay.session(failed.session);
  }

  test("once per connection, after the version and before the login, with OpenSSH's offer and its hassh", async () => {
    const events = await attempt("kex-pw-1");
    expect(events.map((e) => e.eventid)).toEqual(["cowrie.session.connect", "cowrie.client.version", "cowrie.client.kex", "cowrie.login.failed", "cowrie.session.closed"]);
    const kex = events[2];
    expect(kex).toMatchObject({
      src_ip: "127.0.0.1",
      src_port: events[0].src_port,
      dst_port: pot.ports.ssh,
      protocol: "ssh",
      sensor: "db-prod-2",
      session: events[0].session,
      message: `SSH client hassh fingerprint: ${kex.hassh}`,
      hassh: md5(kex.hasshAlgorithms),
      hasshAlgorithms: [kex.kexAlgs, kex.encCS, kex.macCS, kex.compCS].map((l: string[]) => l.join(",")).join(";"),
      langCS: [""],
    });
    // Cowrie 2.9's sample was recorded with this very client: the same fingerprint, field for field.
    const sample = sampleEvents();
    if (events[1].version === sample.find((e) => e.eventid === "cowrie.client.version").version) {
      const { hassh, hasshAlgorithms, kexAlgs, keyAlgs, encCS, macCS, compCS, langCS } = sample.find((e) => e.eventid === "cowrie.client.kex");
      expect(kex).toMatchObject({ hassh, hasshAlgorithms, kexAlgs, keyAlgs, encCS, macCS, compCS, langCS });
    }
    expect(kex.kexAlgs).toContain("curve25519-sha256");
    expect(kex.kexAlgs).toContain("ext-info-c");
    expect(kex.keyAlgs).toContain("ssh-ed25519");
    expect(kex.encCS).toContain("aes128-ctr");
    expect(kex.macCS).toContain("hmac-sha2-256");
    expect(kex.compCS).toContain("none");
  });

  test("another offer, another hassh; the same client, the same hassh", async () => {
    const [first, again, narrowed] = [
      (await attempt("kex-pw-2")).find((e) => e.eventid === "cowrie.client.kex"),
      (await attempt("kex-pw-3")).find((e) => e.eventid === "cowrie.client.kex"),
      (await attempt("kex-pw-4", ["-o", "KexAlgorithms=diffie-hellman-group14-sha256"])).find((e) => e.eventid === "cowrie.client.kex"),
    ];
    expect(again.hassh).toBe(first.hassh);
    expect(narrowed.hassh).not.toBe(first.hassh);
    expect(narrowed.hassh).toBe(md5(narrowed.hasshAlgorithms));
    // OpenSSH appends its extension markers to the one method it was given.
    expect(narrowed.kexAlgs[0]).toBe("diffie-hellman-group14-sha256");
    expect(narrowed.kexAlgs).toContain("ext-info-c");
    expect(narrowed.kexAlgs).not.toContain("curve25519-sha256");
    expect(narrowed.encCS).toEqual(first.encCS);
  });

  test("a client that sends no KEXINIT gets no kex event, and its garbage is not read past 35000 bytes", async () => {
    const c = await RawClient.connect(pot.ports.ssh);
    await c.waitFor("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n");
    c.send("SSH-2.0-Go\r\n");
    c.send(Buffer.alloc(40_000, 0x41));
    await c.closed;
    const connect = await relay.event("cowrie.session.connect", { src_port: c.localPort });
    await relay.event("cowrie.session.closed", { session: connect.session });
    expect(relay.session(connect.session).map((e) => e.eventid)).toEqual(["cowrie.session.connect", "cowrie.client.version", "cowrie.session.closed"]);
  });

  test("many half-sent KEXINITs and a flood hold no more than their bound, and OpenSSH's offer is still read meanwhile", async () => {
    const half = [...Buffer.from("SSH-2.0-bot\r\n"), ...u32(34_990), 4, 20, ...Array(30_000).fill(0)];
    const clients = await Promise.all(Array.from({ length: 100 }, () => RawClient.connect(pot.ports.ssh)));
    for (const c of clients) c.send(Uint8Array.from(half));
    const flood = await RawClient.connect(pot.ports.ssh);
    flood.send("SSH-2.0-flood\r\n");
    for (let i = 0; i < 80; i++) flood.send(Buffer.alloc(64 * 1024, 0x41));
    const events = await attempt("kex-pw-during");
    expect(events.find((e) => e.eventid === "cowrie.client.kex")?.kexAlgs).toContain("curve25519-sha256");
    await flood.closed;
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pot.proc.pid}/status`, "utf8"))![1]);
    console.log(`cowrie pot VmRSS with 100 half-sent KEXINITs held: ${rss} kB`);
    expect(rss).toBeLessThan(150 * 1024);
    for (const c of clients) c.close();
    await Promise.all(clients.map((c) => c.closed));
    expect(pot.proc.exitCode).toBeNull();
  });
});
