import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guessProtocol } from "../../src/honeypots/tcp/guess.ts";
import { type Pot, RawClient, Relay, removeDir, run, startPot } from "./harness";
import { closed as whenClosed, flood, noise, open, rssKb } from "./hostile";

const FTP_BANNER = "220 (vsFTPd 3.0.3)\r\n";
const SSH_BANNER = "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\r\n";

let relay: Relay;
let pot: Pot<"tcp">;

/** Ports 0 of the list are named by their rank: tcp-any-0, tcp-any-1... */
const port = (n: number, of: Pot<"tcp"> = pot): number => (of.ports as Record<string, number>)[`tcp-any-${n}`]!;

beforeAll(async () => {
  relay = Relay.start();
  pot = await startPot("tcp", { ports: "0,0,0,0,0,0,0,0", banners: JSON.stringify({ "any-1": FTP_BANNER, "any-6": SSH_BANNER }), wait_ms: "1000" }, relay);
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  removeDir(pot.dir);
});

/** An event without the fields every event of the pot carries, which are checked here. */
function own(event: any, dstPort: number): any {
  const { src_ip, src_port, dst_ip, dst_port, protocol, session, timestamp, pot_id, pot_type, node_id: _n, ...rest } = event;
  expect({ src_ip, dst_ip, dst_port, protocol, pot_id, pot_type }).toEqual({ src_ip: "127.0.0.1", dst_ip: "127.0.0.1", dst_port: dstPort, protocol: "tcp", pot_id: "tcp-test", pot_type: "tcp" });
  expect([typeof src_port, typeof timestamp, session]).toEqual(["number", "string", expect.stringMatching(/^[0-9a-f]{12}$/)]);
  return rest;
}

/** Every event of the session that ended on this port, once it has ended. */
async function closedSessionOn(dstPort: number, from = relay): Promise<any[]> {
  const { session } = await from.event("tcp.session.closed", { dst_port: dstPort });
  return from.session(session).map((e) => own(e, dstPort));
}

/**
 * Runs a client that waits for an answer the pot never gives, until its first bytes are
 * recorded, then stops it; the events of its session once that has closed.
 */
async function waitingClient(argv: string[], dstPort: number): Promise<any[]> {
  const proc = Bun.spawn(argv, { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
  try {
    const { session } = await relay.event("tcp.payload", { dst_port: dstPort });
    proc.kill();
    await proc.exited;
    await relay.event("tcp.session.closed", { session });
    return relay.session(session).map((e) => own(e, dstPort));
  } finally {
    if (proc.exitCode === null) proc.kill();
  }
}

const connect = { eventid: "tcp.session.connect" };
const closed = (bytes: number, banner: boolean) => ({ eventid: "tcp.session.closed", bytes_received: bytes, banner_sent: banner, duration: expect.any(Number) });
const hex = (text: string) => Buffer.from(text, "latin1").toString("hex");

describe("real clients against the catch-all", () => {
  test("the ready line names one listener per port of the list", () => {
    expect(Object.keys(pot.ports)).toEqual(["tcp-any-0", "tcp-any-1", "tcp-any-2", "tcp-any-3", "tcp-any-4", "tcp-any-5", "tcp-any-6", "tcp-any-7"]);
    expect(new Set(Object.values(pot.ports)).size).toBe(8);
  });

  test("nc: its bytes are recorded in hex and printable, nothing is answered", async () => {
    const p = port(0);
    expect(await run(["nc", "-N", "127.0.0.1", String(p)], "hello\r\n")).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await closedSessionOn(p)).toEqual([
      connect,
      { eventid: "tcp.payload", payload_hex: hex("hello\r\n"), payload_printable: "hello\\x0d\\x0a", bytes: 7, truncated: false, protocol_guess: "unknown" },
      closed(7, false),
    ]);
  });

  test("nc gets the port's banner at once when it speaks first, and after wait_ms when it does not", async () => {
    const p = port(1);
    expect(await run(["nc", "-N", "127.0.0.1", String(p)], "USER anonymous\r\n")).toEqual({ code: 0, stdout: FTP_BANNER, stderr: "" });
    expect(await closedSessionOn(p)).toEqual([
      connect,
      { eventid: "tcp.payload", payload_hex: hex("USER anonymous\r\n"), payload_printable: "USER anonymous\\x0d\\x0a", bytes: 16, truncated: false, protocol_guess: "unknown" },
      closed(16, true),
    ]);

    // A client that only listens: nc with its stdin open and silent.
    const silent = Bun.spawn(["nc", "127.0.0.1", String(p)], { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    try {
      const reader = silent.stdout.getReader();
      let seen = "";
      while (!seen.includes(FTP_BANNER)) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
      }
      expect(seen).toBe(FTP_BANNER);
      const { session } = await relay.next((e) => e.eventid === "tcp.session.connect" && e.dst_port === p && relay.session(e.session).length === 1);
      silent.kill();
      await relay.event("tcp.session.closed", { session });
      expect(relay.session(session).map((e) => own(e, p))).toEqual([connect, closed(0, true)]);
    } finally {
      silent.kill();
    }
  });

  test("openssl s_client: a TLS ClientHello with its SNI, JA3 and JA4", async () => {
    const p = port(2);
    const [first, payload, last] = await waitingClient(["openssl", "s_client", "-connect", `127.0.0.1:${p}`, "-servername", "example.org"], p);
    expect(first).toEqual(connect);
    expect(payload).toMatchObject({ eventid: "tcp.payload", truncated: false, protocol_guess: "tls", tls_version: "TLSv1.3", sni: "example.org", alpn: [] });
    expect(payload.payload_hex).toStartWith("160301");
    expect(payload.bytes).toBe(payload.payload_hex.length / 2);
    expect(payload.ja4).toMatch(/^t13d\d{4}00_[0-9a-f]{12}_[0-9a-f]{12}$/);
    // The event's guess is the pure guess of the bytes it recorded.
    const { protocol, fields } = guessProtocol(Buffer.from(payload.payload_hex, "hex"));
    expect(payload).toMatchObject({ protocol_guess: protocol, ...fields });
    expect(last).toEqual(closed(payload.bytes, false));
  });

  test("ssh: the client's version string; behind an SSH banner, its key exchange too", async () => {
    const ssh = (p: number) => ["ssh", "-p", String(p), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "root@127.0.0.1", "true"];
    const [, silent] = await waitingClient(ssh(port(3)), port(3));
    expect(silent).toEqual({
      eventid: "tcp.payload",
      payload_hex: expect.stringMatching(/^5353482d322e302d/),
      payload_printable: expect.stringMatching(/^SSH-2\.0-OpenSSH_[!-~]+( [!-~]+)?\\x0d\\x0a$/),
      bytes: expect.any(Number),
      truncated: false,
      protocol_guess: "ssh",
      ssh_version: expect.stringMatching(/^SSH-2\.0-OpenSSH_/),
    });
    expect(silent.payload_printable).toBe(`${silent.ssh_version}\\x0d\\x0a`);

    // Given a server's version, OpenSSH goes on with its KEXINIT (message 20), then waits for the server's.
    const [, greeted, end] = await waitingClient(ssh(port(6)), port(6));
    expect(greeted).toMatchObject({ protocol_guess: "ssh", ssh_version: silent.ssh_version });
    expect(greeted.payload_printable).toStartWith(`${silent.ssh_version}\\x0d\\x0a`);
    expect(greeted.payload_printable).toContain("curve25519-sha256");
    expect(end).toEqual(closed(greeted.bytes, true));
  });

  test("curl: an HTTP request line and its headers", async () => {
    const p = port(4);
    const [, payload] = await waitingClient(["curl", "-s", `http://127.0.0.1:${p}/x`], p);
    expect(payload).toMatchObject({
      protocol_guess: "http",
      http_method: "GET",
      http_path: "/x",
      http_version: "1.1",
      http_host: `127.0.0.1:${p}`,
      http_user_agent: expect.stringMatching(/^curl\/\d/),
    });
    expect(payload.payload_printable).toStartWith("GET /x HTTP/1.1\\x0d\\x0aHost: 127.0.0.1:");
  });

  test("redis-cli PING: a RESP command", async () => {
    const p = port(5);
    const [, payload] = await waitingClient(["redis-cli", "-p", String(p), "PING"], p);
    expect(payload).toEqual({
      eventid: "tcp.payload",
      payload_hex: hex("*1\r\n$4\r\nPING\r\n"),
      payload_printable: "*1\\x0d\\x0a$4\\x0d\\x0aPING\\x0d\\x0a",
      bytes: 14,
      truncated: false,
      protocol_guess: "redis",
      redis_command: "PING",
    });
  });
});

describe("nmap", () => {
  test("nmap -sV names the product of a port's banner; a bannerless port stays up through nmap's probes", async () => {
    // A bannerless port answers no probe: nmap tries its probes one after another, waiting out
    // each one (its default set, intensity 7, takes minutes); a lighter scan sends fewer of them.
    const nmap = (p: number, ...flags: string[]) => run(["nmap", "-sV", "-Pn", ...flags, "-p", String(p), "127.0.0.1"]);
    const [ftp, ssh, silent] = await Promise.all([nmap(port(1)), nmap(port(6)), nmap(port(7), "--version-intensity", "2")]);
    console.log([ftp, ssh, silent].map((r) => r.stdout.split("\n").find((l) => l.includes("/tcp "))).join("\n"));
    expect(ftp.stdout).toMatch(new RegExp(`\\n${port(1)}/tcp open +ftp +vsftpd 3\\.0\\.3\\n`));
    expect(ssh.stdout).toMatch(new RegExp(`\\n${port(6)}/tcp open +ssh +OpenSSH 8\\.9p1 Ubuntu 3ubuntu0\\.6 \\(Ubuntu Linux; protocol 2\\.0\\)\\n`));
    expect(silent.stdout).toMatch(new RegExp(`\\n${port(7)}/tcp open +unknown\\n`));
    expect(`${ftp.stdout}${ssh.stdout}${silent.stdout}`).not.toContain("SF-Port");
    expect(pot.proc.exitCode).toBeNull();
    // Each probe was a session of its own, its bytes guessed.
    const guesses = new Set(relay.all.filter((e) => e.eventid === "tcp.payload" && e.dst_port === port(7)).map((e) => e.protocol_guess));
    // Intensity 2 sends nmap's NULL, HTTP and TLS probes; the other probes' bytes are guessed in tcp-guess.test.ts.
    for (const name of ["http", "tls", "unknown"]) expect(guesses).toContain(name);
  }, 120_000);
});

describe("hostile input", () => {
  test("a flood past first_bytes, a connection storm past the cap: the pot stays up and small, and records", async () => {
    const hostileRelay = Relay.start();
    const hostile = await startPot("tcp", { ports: "0,0,0,0", max_connections: "64", first_bytes: "1024", banners: JSON.stringify({ "any-3": FTP_BANNER }), wait_ms: "0" }, hostileRelay);
    const sockets: Socket[] = [];
    const track = async (p: Promise<Socket>) => {
      const socket = await p;
      sockets.push(socket);
      return socket;
    };
    const connects = () => hostileRelay.all.filter((e) => e.eventid === "tcp.session.connect").length;
    try {
      const rssBefore = rssKb(hostile.proc.pid);
      const good = await RawClient.connect(port(0, hostile));
      const garbage = noise(64 * 1024, 7);
      const flooder = await track(open(port(1, hostile)));
      const flooding = flood(flooder, garbage, 8 * 1024 * 1024);

      // The cap is over all ports: 62 more fill it, and the next 20 are closed as soon as they connect.
      const holders = await Promise.all(Array.from({ length: 62 }, (_, i) => track(open(port(2 + (i % 2), hostile)))));
      await hostileRelay.next(() => connects() === 64);
      const extra = await Promise.all(Array.from({ length: 20 }, (_, i) => track(open(port(i % 4, hostile)))));
      await Promise.all(extra.map(whenClosed));
      expect(connects()).toBe(64);

      // The well-behaved client, on its own connection, in the middle of the flood.
      good.send("during the flood\r\n");
      good.close();
      await good.closed;
      const during = await closedSessionOn(port(0, hostile), hostileRelay);
      expect(during).toEqual([
        connect,
        { eventid: "tcp.payload", payload_hex: hex("during the flood\r\n"), payload_printable: "during the flood\\x0d\\x0a", bytes: 18, truncated: false, protocol_guess: "unknown" },
        closed(18, false),
      ]);

      await flooding;
      flooder.end();
      const flooded = await closedSessionOn(port(1, hostile), hostileRelay);
      expect(flooded).toEqual([
        connect,
        { eventid: "tcp.payload", payload_hex: garbage.subarray(0, 1024).toString("hex"), payload_printable: expect.any(String), bytes: 1024, truncated: true, protocol_guess: "unknown" },
        closed(8 * 1024 * 1024, false),
      ]);
      for (const socket of holders) socket.destroy();
      await Promise.all(holders.map(whenClosed));

      // 5000 connections over the four ports, 250 at a time: more than the cap each time.
      let storm = 0;
      for (let wave = 0; wave < 20; wave++) {
        const batch = await Promise.all(Array.from({ length: 250 }, (_, i) => open(port(i % 4, hostile))));
        for (const socket of batch) socket.end("GET / HTTP/1.0\r\n\r\n");
        await Promise.all(batch.map(whenClosed));
        storm += batch.length;
      }
      expect(storm).toBe(5000);
      const rssAfter = rssKb(hostile.proc.pid);
      console.log(`tcp pot VmRSS: ${rssBefore} kB at start, ${rssAfter} kB after an 8 MiB flood and 5000 connections`);
      expect(rssAfter).toBeLessThan(150 * 1024);
      expect(hostile.proc.exitCode).toBeNull();

      // Every connection the pot took was recorded from connect to closed; the rest it refused.
      const count = (eventid: string) => hostileRelay.all.filter((e) => e.eventid === eventid).length;
      await hostileRelay.next(() => count("tcp.session.closed") === count("tcp.session.connect"));
      const taken = count("tcp.session.connect") - 64;
      console.log(`storm: ${taken} of 5000 connections taken, ${5000 - taken} refused at the cap`);
      expect(taken).toBeGreaterThan(64);
      expect(count("tcp.payload")).toBe(taken + 2);

      const after = await run(["nc", "-N", "127.0.0.1", String(port(3, hostile))], "after\r\n");
      expect(after).toEqual({ code: 0, stdout: FTP_BANNER, stderr: "" });
      const { session } = await hostileRelay.event("tcp.payload", { payload_hex: hex("after\r\n") });
      await hostileRelay.event("tcp.session.closed", { session });
      expect(hostileRelay.session(session).map((e) => own(e, port(3, hostile)))).toEqual([
        connect,
        { eventid: "tcp.payload", payload_hex: hex("after\r\n"), payload_printable: "after\\x0d\\x0a", bytes: 7, truncated: false, protocol_guess: "unknown" },
        closed(7, true),
      ]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await hostile.stop();
      hostileRelay.stop();
      removeDir(hostile.dir);
    }
  }, 120_000);
});

describe("config and shutdown", () => {
  test("a bad port list stops the pot before it listens, naming the key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "honeybee-tcp-"));
    try {
      await expect(startPot("tcp", { ports: "8000,70000" }, null, dir)).rejects.toThrow('config key ports: \\"70000\\" is not a port 0-65535');
    } finally {
      removeDir(dir);
    }
  });

  test("SIGTERM: an open connection is closed and recorded so, the pot exits 0, every event is both on the relay and in log/tcp.json", async () => {
    const client = await RawClient.connect(port(0));
    client.send("still here");
    const { session } = await relay.next((e) => e.eventid === "tcp.payload" && e.src_port === client.localPort);
    expect(await pot.stop()).toBe(0);
    await client.closed;
    expect(relay.session(session).map((e) => own(e, port(0)))).toEqual([
      connect,
      { eventid: "tcp.payload", payload_hex: hex("still here"), payload_printable: "still here", bytes: 10, truncated: false, protocol_guess: "unknown" },
      closed(10, false),
    ]);
    expect(relay.lines).toEqual(pot.fileLines());
  });
});
