import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { Kind, kindOfType } from "../../src/db/session-fields";
import { silentLogger } from "../../src/log";
import { listen } from "../../src/honeypots/shared/listener";
import { InputBuffer, PotSession, printable } from "../../src/honeypots/shared/session";
import { EventSink } from "../../src/honeypots/shared/sink";
import { tempDir } from "../helpers";

test("a session's events carry the connection's fields, which captured fields cannot override, and close once", async () => {
  using dir = tempDir();
  const file = join(dir.path, "redis.json");
  const sink = new EventSink({ file, relay: null, identity: { node_id: null, pot_id: "r1", pot_type: "redis" }, logger: silentLogger() });
  const { promise, resolve } = Promise.withResolvers<Socket>();
  const listener = await listen({ name: "redis", host: "127.0.0.1", port: 0, maxConnections: 4, idleMs: 5000, logger: silentLogger() }, resolve);
  const client = connect(listener.port, "127.0.0.1");
  const socket = await promise;
  const srcPort = socket.remotePort;
  const session = PotSession.accepted(socket, "redis", "redis", sink, { banner: false });
  session.emit("command.input", { input: "PING", session: "forged", src_ip: "192.0.2.1" });
  session.close();
  session.close();
  client.destroy();
  await listener.close();
  await sink.close(1000);
  const events = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const common = { src_ip: "127.0.0.1", src_port: srcPort, dst_ip: "127.0.0.1", dst_port: listener.port, protocol: "redis", session: session.id, pot_id: "r1", pot_type: "redis" };
  expect(events.map(({ timestamp, duration, ...e }) => e)).toEqual([
    { eventid: "redis.session.connect", banner: false, ...common },
    { eventid: "redis.command.input", input: "PING", ...common },
    { eventid: "redis.session.closed", ...common },
  ]);
  expect(session.id).toMatch(/^[0-9a-f]{12}$/);
  expect(typeof events[2].duration).toBe("number");
});

test("the listener's total time limit closes a connection that keeps sending", async () => {
  const closed = Promise.withResolvers<void>();
  const listener = await listen({ name: "t", host: "127.0.0.1", port: 0, maxConnections: 4, idleMs: 60_000, totalMs: 300, logger: silentLogger() }, (s) => s.on("close", () => closed.resolve()));
  const client = connect(listener.port, "127.0.0.1");
  const drip = setInterval(() => client.write("x"), 50);
  await closed.promise;
  clearInterval(drip);
  client.destroy();
  await listener.close();
});

test("an input buffer refuses what would pass its bound and keeps what it had", () => {
  const buf = new InputBuffer(8);
  expect(buf.push(Buffer.from("abcde"))).toBe(true);
  expect(buf.push(Buffer.from("fghij"))).toBe(false);
  expect(buf.view().toString()).toBe("abcde");
  buf.consume(2);
  expect(buf.push(Buffer.from("fghij"))).toBe(true);
  expect(buf.view().toString()).toBe("cdefghij");
});

test("an input buffer fed a byte at a time keeps every byte in order, and a kept view stays valid", () => {
  const buf = new InputBuffer(1 << 20);
  const kept: Buffer[] = [];
  let expected = "";
  for (let i = 0; i < 100_000; i++) {
    const c = String.fromCharCode(97 + (i % 26));
    expect(buf.push(Buffer.from(c))).toBe(true);
    expected += c;
    if (i % 1000 === 999) {
      kept.push(buf.view().subarray(0, 10));
      buf.consume(990);
      expected = expected.slice(990);
    }
  }
  expect(buf.view().toString()).toBe(expected);
  expect(kept[0]!.toString()).toBe("abcdefghij");
  expect(kept.every((k) => k.length === 10)).toBe(true);
});

test("captured bytes are shown printable, with everything else escaped", () => {
  expect(printable(Buffer.from([0x16, 0x03, 0x01, 0x41, 0x5c, 0x7f]))).toBe("\\x16\\x03\\x01A\\x5c\\x7f");
});

test("any kind's events fill sessions by the end of their names, as Cowrie's do", () => {
  expect(["cowrie.login.success", "redis.login.success", "adb.session.file_upload", "mysql.command.input", "docker.session.closed", "cowrie.session.file_download.failed", "redis.login.failed", "web.request"].map(kindOfType)).toEqual([
    Kind.LoginSuccess,
    Kind.LoginSuccess,
    Kind.File,
    Kind.Command,
    Kind.Closed,
    Kind.Other,
    Kind.Other,
    Kind.Other,
  ]);
});
