/**
 * Every built-in kind under the same storm: 100 MB of random bytes (reconnecting whenever the
 * pot cuts a connection off) and 5,000 connections at once, while an attacker that connected
 * before the storm keeps its connection. The pot must stay up with its memory bounded, and the
 * sessions before, through and after the storm must be recorded whole. Each kind's own tests
 * flood what its protocol makes dangerous; this one holds all of them to one bar.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { closed, flood, open, rssKb } from "./hostile";
import { Relay, removeDir, startPot } from "./harness";

const GARBAGE_BYTES = 100 * 1024 * 1024;
const PER_CONNECTION = 8 * 1024 * 1024;
const CONNECTIONS = 5000;
const MAX_RSS_KB = 200 * 1024;

/** Each kind with its ports on any free port, and the listener the storm hits. */
const KINDS = [
  { kind: "cowrie", config: { ssh_port: "0", telnet_port: "0" }, port: "ssh" },
  { kind: "honnypotter", config: { http_port: "0" }, port: "http" },
  { kind: "redis", config: { redis_port: "0" }, port: "redis" },
  { kind: "mysql", config: { mysql_port: "0" }, port: "mysql" },
  { kind: "adb", config: { adb_port: "0" }, port: "adb" },
  { kind: "docker", config: { docker_port: "0" }, port: "docker" },
  { kind: "web", config: { http_port: "0", https_port: "0" }, port: "http" },
  { kind: "tcp", config: { ports: "0" }, port: "tcp-any-0" },
] as const;

const relay = Relay.start();
afterAll(() => relay.stop());

/** Sends `total` random bytes over as many connections as it takes. */
async function garbage(port: number, total: number): Promise<number> {
  const chunk = randomBytes(64 * 1024);
  let sent = 0;
  while (sent < total) {
    const socket = await open(port);
    sent += await flood(socket, chunk, Math.min(PER_CONNECTION, total - sent));
    socket.destroy();
  }
  return sent;
}

/** `count` connections opened at once, held until all are open or refused, then closed. */
async function storm(port: number, count: number): Promise<void> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += 500) sockets.push(...(await Promise.all(Array.from({ length: Math.min(500, count - i) }, () => open(port)))));
  for (const s of sockets) s.destroy();
  await Promise.all(sockets.map(closed));
}

/** A connection's whole session: its connect and its closed event, found by its source port. */
async function session(kind: string, socket: Socket): Promise<{ connect: boolean; closed: boolean }> {
  const connect = await relay.next((e) => e.eventid === `${kind}.session.connect` && e.src_port === socket.localPort);
  socket.destroy();
  await relay.next((e) => e.eventid === `${kind}.session.closed` && e.session === connect.session);
  return { connect: true, closed: true };
}

describe("every kind under the same storm", () => {
  for (const { kind, config, port: portName } of KINDS) {
    test(`${kind}: 100 MB of garbage and ${CONNECTIONS} connections; it stays up and small, and sessions before, through and after are whole`, async () => {
      const pot = await startPot(kind, config, relay);
      try {
        const port = (pot.ports as Record<string, number>)[portName]!;
        // honnypotter records logins, not connections: a login stands for a session there.
        const login = async (name: string) => {
          const r = await fetch(`http://127.0.0.1:${port}/wp-login.php`, { method: "POST", body: new URLSearchParams({ log: name, pwd: "x" }) });
          await r.text();
          return relay.event("honnypotter.login.failed", { username: name });
        };
        const before = kind === "honnypotter" ? null : await open(port);
        if (before) await relay.next((e) => e.eventid === `${kind}.session.connect` && e.src_port === before.localPort);

        const sent = await garbage(port, GARBAGE_BYTES);
        await storm(port, CONNECTIONS);
        expect(sent).toBeGreaterThanOrEqual(GARBAGE_BYTES);
        expect(pot.proc.exitCode).toBeNull();
        const rss = rssKb(pot.proc.pid);
        console.log(`${kind}: VmRSS ${rss} kB after ${sent / 1024 / 1024} MB of garbage and ${CONNECTIONS} connections`);
        expect(rss).toBeLessThan(MAX_RSS_KB);

        if (kind === "honnypotter") {
          expect(await login("after-the-storm")).toMatchObject({ username: "after-the-storm" });
        } else {
          expect(await session(kind, before!)).toEqual({ connect: true, closed: true });
          expect(await session(kind, await open(port))).toEqual({ connect: true, closed: true });
        }

        // Nothing lost on the way to the node: every line the pot logged through the storm reached
        // the relay, and every connection it took (the flood's, the storm's it let in) is a whole
        // session there, opened and closed.
        const relayedLines = () => relay.lines.filter((l) => JSON.parse(l).pot_type === kind);
        for (let i = 0; i < 600 && relayedLines().length < pot.fileLines().length; i++) await Bun.sleep(50);
        const relayed = relayedLines();
        expect(relayed).toEqual(pot.fileLines());
        const events = relayed.map((l) => JSON.parse(l));
        const opened = events.filter((e) => e.eventid === `${kind}.session.connect`).map((e) => e.session);
        const ended = new Set(events.filter((e) => e.eventid === `${kind}.session.closed`).map((e) => e.session));
        expect(opened.filter((s) => !ended.has(s))).toEqual([]);
        console.log(`${kind}: ${relayed.length} events, ${opened.length} sessions, all closed, logged and relayed alike`);
        if (kind !== "honnypotter") expect(opened.length).toBeGreaterThan(2);
      } finally {
        await pot.stop();
        removeDir(pot.dir);
      }
    }, 180_000);
  }
});
