import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { ConfigError, loadConfig } from "../../src/honeypots/shared/config";
import { EventSink, type SinkOptions } from "../../src/honeypots/shared/sink";
import { NODE_ID, Relay, removeDir, run } from "./harness";

const MANIFEST = {
  name: "cowrie",
  config: {
    ssh_port: { default: "2222", description: "", port: true },
    telnet_port: { default: "2223", description: "", port: true },
    hostname: { default: "db-prod-2", description: "", schema: { pattern: "^[a-z0-9-]+$" } },
  },
};

function withDir<T>(body: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "honeybee-shared-"));
  try {
    return body(dir);
  } finally {
    removeDir(dir);
  }
}

describe("pot config", () => {
  test("per key: the config file, then HONEYBEE_<KEY>, then the manifest default; node_id keeps its digits", () => {
    withDir((dir) => {
      const file = join(dir, "config.json");
      writeFileSync(file, `{"ssh_port":"0","pot_id":"p1","event_port":"9101","node_id":${NODE_ID}}`);
      const config = loadConfig(MANIFEST, { HONEYBEE_CONFIG: file, HONEYBEE_SSH_PORT: "1", HONEYBEE_TELNET_PORT: "2224", HONEYBEE_EVENT_HOST: "10.0.0.1" });
      expect(config).toEqual({ ssh_port: "0", telnet_port: "2224", hostname: "db-prod-2", event_host: "10.0.0.1", event_port: "9101", node_id: NODE_ID, pot_id: "p1", pot_type: "cowrie" });
    });
    expect(loadConfig(MANIFEST, {})).toMatchObject({ ssh_port: "2222", pot_id: "cowrie", pot_type: "cowrie", node_id: "", event_port: "" });
  });

  test("bad values are refused with the key's name", () => {
    const bad = (env: Record<string, string>) => () => loadConfig(MANIFEST, env);
    expect(bad({ HONEYBEE_SSH_PORT: "65536" })).toThrow(new ConfigError('config key ssh_port must be a port 0-65535, got "65536"'));
    expect(bad({ HONEYBEE_TELNET_PORT: "22x" })).toThrow(/telnet_port/);
    expect(bad({ HONEYBEE_HOSTNAME: "a b" })).toThrow(/hostname does not match/);
    expect(bad({ HONEYBEE_EVENT_PORT: "0" })).toThrow(/event_port must be 1-65535/);
    expect(bad({ HONEYBEE_NODE_ID: "18446744073709551616" })).toThrow(/node_id must be an unsigned 64-bit integer/);
    withDir((dir) => {
      writeFileSync(join(dir, "a.json"), "[1]");
      writeFileSync(join(dir, "b.json"), '{"hostname":{"x":1}}');
      expect(bad({ HONEYBEE_CONFIG: join(dir, "a.json") })).toThrow(/must hold a JSON object/);
      expect(bad({ HONEYBEE_CONFIG: join(dir, "b.json") })).toThrow("config key hostname must be a string");
      expect(bad({ HONEYBEE_CONFIG: join(dir, "missing.json") })).toThrow(/cannot read config file/);
    });
  });

  test("a honeypot with a bad value exits 2 and says which key", async () => {
    const main = join(import.meta.dir, "..", "..", "src", "honeypots", "honnypotter", "main.ts");
    const r = await run(["env", "HONEYBEE_HTTP_PORT=http", process.execPath, main]);
    expect(r).toMatchObject({ code: 2, stdout: "", stderr: 'honnypotter: config key http_port must be a port 0-65535, got "http"\n' });
  });
});

function sinkIn(dir: string, port: number, extra: Partial<SinkOptions> = {}): EventSink {
  return new EventSink({
    file: join(dir, "log", "t.json"),
    relay: { host: "127.0.0.1", port },
    identity: { node_id: BigInt(NODE_ID), pot_id: "p", pot_type: "t" },
    logger: pino({ level: "silent" }),
    ...extra,
  });
}

/** A port nothing listens on yet, for a relay that comes up later. */
function laterPort(): number {
  const probe = Relay.start();
  const port = probe.port;
  probe.stop();
  return port;
}

describe("event sink", () => {
  test("queues while the relay is away, delivers in order once it is up, and appends to the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "honeybee-sink-"));
    const port = laterPort();
    writeFileSync(join(dir, "keep.json"), "");
    const sink = sinkIn(dir, port);
    try {
      for (let i = 0; i < 5; i++) sink.emit({ eventid: "t.e", n: i, timestamp: "2026-01-01T00:00:00.000000Z" });
      const relay = Relay.start(port);
      await relay.event("t.e", { n: 4 });
      expect(relay.all.map((e) => e.n)).toEqual([0, 1, 2, 3, 4]);
      expect(relay.lines[0]).toBe(`{"eventid":"t.e","n":0,"timestamp":"2026-01-01T00:00:00.000000Z","pot_id":"p","pot_type":"t","node_id":${NODE_ID}}`);

      // The relay goes away and comes back: the sink notices, reconnects and carries on.
      relay.stop();
      const again = Relay.start(port);
      await again.connected();
      sink.emit({ eventid: "t.e", n: 5 });
      await again.event("t.e", { n: 5 });
      again.stop();
      await sink.close(0);
      const file = readFileSync(join(dir, "log", "t.json"), "utf8").trim().split("\n");
      expect(file.map((l) => JSON.parse(l).n)).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      removeDir(dir);
    }
  });

  test("a full queue drops the oldest events and counts them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "honeybee-sink-"));
    const port = laterPort();
    const sink = sinkIn(dir, port, { maxQueuedEvents: 5 });
    try {
      for (let i = 0; i < 12; i++) sink.emit({ eventid: "t.e", n: i });
      expect(sink.dropped).toBe(7);
      const relay = Relay.start(port);
      await relay.event("t.e", { n: 11 });
      expect(relay.all.map((e) => e.n)).toEqual([7, 8, 9, 10, 11]);
      relay.stop();
      await sink.close(0);
    } finally {
      removeDir(dir);
    }
  });

  test("a burst larger than the socket buffers arrives whole: partial writes are resumed on drain", async () => {
    const dir = mkdtempSync(join(tmpdir(), "honeybee-sink-"));
    const relay = Relay.start();
    const sink = sinkIn(dir, relay.port, { maxQueuedEvents: 100_000, maxQueuedChars: 64 * 1024 * 1024 });
    try {
      await relay.connected();
      const padding = "x".repeat(1000);
      const total = 20_000;
      // Emitted in one synchronous burst: nothing is read meanwhile, so the kernel buffers fill.
      for (let i = 0; i < total; i++) sink.emit({ eventid: "t.burst", n: i, padding });
      await relay.event("t.burst", { n: total - 1 });
      expect(relay.all.length).toBe(total);
      expect(relay.all.every((e, i) => e.n === i && e.padding === padding)).toBe(true);
      await sink.close(1000);
    } finally {
      relay.stop();
      removeDir(dir);
    }
  });

  test("close() waits at most its limit when the relay never comes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "honeybee-sink-"));
    const sink = sinkIn(dir, laterPort());
    try {
      sink.emit({ eventid: "t.e" });
      const started = performance.now();
      await sink.close(200);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(readFileSync(join(dir, "log", "t.json"), "utf8")).toContain('"eventid":"t.e"');
    } finally {
      removeDir(dir);
    }
  });
});
