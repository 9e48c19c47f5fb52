import { sqliteEventWriting } from "../../src/db/writer-channel";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { defaultCoreConfig, type CoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { createIngest, startEventSocket } from "../../src/core/ingest";
import { openDatabase } from "../../src/db";
import { EventQueries } from "../../src/db/event-queries";
import { silentLogger } from "../../src/log";
import { Security } from "../../src/core/auth";
import { startNodeChannel } from "../../src/core/node-channel";
import { Registry } from "../../src/core/registry";
import { SqlNodeSecretStore } from "../../src/db/node-secret-store";
import { RegistryStore } from "../../src/db/registry-store";
import { stringify } from "../../src/protocol/json";
import { EventStreamClient, tempDir, until } from "../helpers";

// The pipeline as startCore wires it (real SQLite file, writer thread, event socket), with the
// test-only gate that stalls the writer.
test("a stalled writer pauses reading: pending events stay bounded with many fast producers, and nothing is lost", async () => {
  using dir = tempDir();
  const config = defaultCoreConfig({ db: join(dir.path, "events.db"), max_pending_events: 1000, batch_size: 200, log_events: false });
  const db = openDatabase(config.db);
  const gate = Promise.withResolvers<void>();
  const overloaded = Promise.withResolvers<void>();
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger(), writerGate: () => gate.promise });
  ingest.onPressure((on) => on && overloaded.resolve());
  const socket = startEventSocket({ host: "127.0.0.1", port: 0, ingest, config, logger: silentLogger() });
  try {
    // Enough per producer that loopback's socket buffers cannot hold it all: each must block.
    const PRODUCERS = 4;
    const PER = 6000;
    const pad = "p".repeat(1500);
    const producers = await Promise.all(Array.from({ length: PRODUCERS }, () => EventStreamClient.connect(socket.port, { acks: true })));
    producers.forEach((p, k) => void p.send(Array.from({ length: PER }, (_, i) => `{"eventid":"bp.event","src_ip":"10.0.${k}.${i % 250}","pad":"${pad}"}`)));

    await overloaded.promise;
    await until(() => producers.every((p) => p.blocked), "every producer blocked by TCP backpressure");
    // Bounded: the limit plus what the chunks being parsed when reading paused carried.
    const slack = PRODUCERS * Math.ceil((256 * 1024) / 1500);
    expect(ingest.counters.pending).toBeGreaterThanOrEqual(1000);
    expect(ingest.counters.pending).toBeLessThanOrEqual(1000 + slack);
    expect(ingest.counters.committed).toBe(0);

    gate.resolve();
    await Promise.all(producers.map((p) => p.ack(PER)));
    expect(ingest.counters).toMatchObject({ received: PRODUCERS * PER, committed: PRODUCERS * PER, rejected: 0, pending: 0 });
    expect(new EventQueries(db).stats(86_400_000, 1).totalEvents).toBe(PRODUCERS * PER);
    for (const p of producers) p.close();
  } finally {
    await socket.stop();
    await ingest.stop();
    db.$client.close();
  }
});

/**
 * A producer that never runs dry: writes `first`, then `chunk` again and again as fast as the
 * socket takes it, and counts the acks (on the event socket).
 */
async function blaster(port: number, chunk: Buffer, first = '{"version":2,"message":{"EventStreamHello":{"acks":true}}}\n') {
  const p = { acked: 0, socket: null as any, stop: false };
  let off = 0;
  let text = "";
  const pump = (s: any) => {
    while (!p.stop) {
      const n = s.write(chunk.subarray(off));
      if (n <= 0) return;
      off = (off + n) % chunk.length;
      if (off !== 0) return;
    }
  };
  p.socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, d) => {
        text += d.toString();
        const lines = text.split("\n");
        text = lines.pop()!;
        for (const l of lines) {
          const ack = JSON.parse(l).message?.EventAck;
          if (ack) p.acked = Math.max(p.acked, ack.seq);
        }
      },
      drain: (s) => pump(s),
    },
  });
  p.socket.write(first);
  pump(p.socket);
  return p;
}

test("fair reading: every one of several producers blasting at once is read, not just the first few", async () => {
  using dir = tempDir();
  const config = defaultCoreConfig({ db: join(dir.path, "events.db"), max_pending_events: 16000, batch_size: 4000, log_events: false });
  const db = openDatabase(config.db);
  const gate = Promise.withResolvers<void>();
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger(), writerGate: () => gate.promise });
  const socket = startEventSocket({ host: "127.0.0.1", port: 0, ingest, config, logger: silentLogger() });
  const PRODUCERS = 8;
  const producers: Awaited<ReturnType<typeof blaster>>[] = [];
  try {
    const pad = "p".repeat(200);
    for (let k = 0; k < PRODUCERS; k++) {
      const chunk = Buffer.from(Array.from({ length: 2000 }, (_, i) => `{"eventid":"fair.p${k}","src_ip":"10.0.${k}.${i % 250}","pad":"${pad}"}\n`).join(""));
      producers.push(await blaster(socket.port, chunk));
    }
    await until(() => ingest.isOverloaded, "the stalled writer overloads the pipeline");
    gate.resolve();
    // Until the producers together got 60 rounds of the pending limit through.
    const TOTAL = 60 * config.max_pending_events;
    await until(() => producers.reduce((n, p) => n + p.acked, 0) >= TOTAL, `${TOTAL} events acknowledged`, 6000);
    const acked = producers.map((p) => p.acked);
    // A fair share each, within half again (unfair reading gave one 3.6 shares and the seven others 0.6).
    const fair = TOTAL / PRODUCERS;
    expect(acked.filter((n) => n < fair / 1.5 || n > fair * 1.5)).toEqual([]);
  } finally {
    for (const p of producers) {
      p.stop = true;
      p.socket.end();
    }
    await socket.stop();
    await ingest.stop();
    db.$client.close();
  }
});

/** The control channel as startCore wires it, on a pipeline whose writer waits for `gate`. */
function controlChannel(config: CoreConfig, gate: Promise<void>) {
  const db = openDatabase(config.db);
  const bus = new MessageBus();
  const registry = new Registry(new RegistryStore(db), bus, silentLogger(), config.heartbeat_timeout_ms);
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus, registry, logger: silentLogger(), writerGate: () => gate });
  const security = new Security(config);
  security.useNodeSecrets(new SqlNodeSecretStore(db));
  const channel = startNodeChannel({
    host: "127.0.0.1",
    port: 0,
    maxMessageBytes: config.max_message_bytes,
    registry,
    ingest,
    onCommandResult: () => {},
    connections: security.connections.node,
    nodeAuth: security.nodeAuth,
    logger: silentLogger(),
  });
  return {
    db,
    ingest,
    channel,
    async stop() {
      channel.stop();
      registry.stop();
      await ingest.stop();
      db.$client.close();
    },
  };
}

test("PotEvent and PotLog on the control channel are under the same backpressure: pending stays bounded", async () => {
  using dir = tempDir();
  const config = defaultCoreConfig({ db: join(dir.path, "events.db"), max_pending_events: 1000, batch_size: 200, log_events: false });
  const gate = Promise.withResolvers<void>();
  const overloaded = Promise.withResolvers<void>();
  const { ingest, channel, stop } = controlChannel(config, gate.promise);
  ingest.onPressure((on) => on && overloaded.resolve());
  const nodes: EventStreamClient[] = [];
  try {
    const NODES = 4;
    const PER = 6000;
    const pad = "p".repeat(1500);
    for (let k = 0; k < NODES; k++) {
      // A node's stream: its registration, then events as fast as the socket takes them.
      const node = await EventStreamClient.connect(channel.port);
      const id = BigInt(4000 + k);
      const lines = [stringify({ version: 2, message: { NodeRegistration: { node_id: id, node_name: `n${k}`, address: "127.0.0.1", port: 0, node_type: "Full" } } })];
      for (let i = 0; i < PER; i++) {
        const kind = i % 2 === 0 ? "PotEvent" : "PotLog";
        const payload = kind === "PotEvent" ? { pot_id: "p", event_type: "bp.control", data: { pad } } : { pot_id: "p", log_type: "stdout", data: pad };
        lines.push(stringify({ version: 2, message: { [kind]: payload } }));
      }
      node.send(lines);
      nodes.push(node);
    }
    await overloaded.promise;
    await until(() => nodes.every((n) => n.blocked), "every node blocked by TCP backpressure");
    const slack = NODES * Math.ceil((512 * 1024) / 1500);
    expect(ingest.counters.pending).toBeGreaterThanOrEqual(1000);
    expect(ingest.counters.pending).toBeLessThanOrEqual(1000 + slack);

    gate.resolve();
    await until(() => ingest.counters.committed === NODES * PER, "every event committed", 3000);
    expect(ingest.counters).toMatchObject({ received: NODES * PER, committed: NODES * PER, rejected: 0, pending: 0 });
  } finally {
    gate.resolve();
    for (const n of nodes) n.close();
    await stop();
  }
});

test("a flood of large PotLogs on the control channel is bounded in bytes: pending data stays within max_pending_bytes, far below what max_pending_events allows", async () => {
  using dir = tempDir();
  const MAX_BYTES = 4 * 1024 * 1024;
  const config = defaultCoreConfig({ db: join(dir.path, "events.db"), max_pending_events: 100_000, max_pending_bytes: MAX_BYTES, log_events: false });
  const gate = Promise.withResolvers<void>();
  const overloaded = Promise.withResolvers<void>();
  const { ingest, channel, stop } = controlChannel(config, gate.promise);
  ingest.onPressure((on) => on && overloaded.resolve());
  const nodes: EventStreamClient[] = [];
  try {
    const NODES = 4;
    const PER = 1500;
    const pad = "p".repeat(16 * 1024);
    for (let k = 0; k < NODES; k++) {
      const node = await EventStreamClient.connect(channel.port);
      const id = BigInt(6000 + k);
      const lines = [stringify({ version: 2, message: { NodeRegistration: { node_id: id, node_name: `n${k}`, address: "127.0.0.1", port: 0, node_type: "Full" } } })];
      for (let i = 0; i < PER; i++) lines.push(`{"version":2,"message":{"PotLog":{"pot_id":"big-${k}","log_type":"cowrie.command.input","data":{"src_ip":"10.2.${k}.${i % 250}","input":"${pad}"}}}}`);
      node.send(lines);
      nodes.push(node);
    }
    await overloaded.promise;
    await until(() => nodes.every((n) => n.blocked), "every node blocked by TCP backpressure");
    // The writer is stalled, so this is the most that was held: the bound, plus the chunk each node's read was in.
    const slack = NODES * 512 * 1024;
    expect(ingest.pendingBytes).toBeGreaterThanOrEqual(MAX_BYTES);
    expect(ingest.pendingBytes).toBeLessThanOrEqual(MAX_BYTES + slack);
    expect(ingest.counters.pending).toBeLessThan((MAX_BYTES + slack) / pad.length);

    gate.resolve();
    await until(() => ingest.counters.committed === NODES * PER, "every event committed", 3000);
    expect(ingest.counters).toMatchObject({ received: NODES * PER, committed: NODES * PER, rejected: 0, pending: 0 });
    expect(ingest.pendingBytes).toBe(0);
  } finally {
    gate.resolve();
    for (const n of nodes) n.close();
    await stop();
  }
});

test("fair reading on the control channel: every one of several nodes blasting PotLogs at once is read", async () => {
  using dir = tempDir();
  const config = defaultCoreConfig({ db: join(dir.path, "events.db"), max_pending_events: 16000, batch_size: 4000, log_events: false });
  const gate = Promise.withResolvers<void>();
  const { db, ingest, channel, stop } = controlChannel(config, gate.promise);
  const NODES = 8;
  const nodes: Awaited<ReturnType<typeof blaster>>[] = [];
  try {
    const pad = "p".repeat(200);
    for (let k = 0; k < NODES; k++) {
      const id = 5000 + k;
      // As the upstream Go node sends them: every event a PotLog, data values strings.
      const chunk = Buffer.from(Array.from({ length: 2000 }, (_, i) => `{"version":2,"message":{"PotLog":{"pot_id":"fair-${k}","log_type":"cowrie.login.failed","data":{"src_ip":"10.1.${k}.${i % 250}","pad":"${pad}"}}}}\n`).join(""));
      const registration = `{"version":2,"message":{"NodeRegistration":{"node_id":${id},"node_name":"n${k}","address":"127.0.0.1","port":0,"node_type":"Full"}}}\n`;
      nodes.push(await blaster(channel.port, chunk, registration));
    }
    await until(() => ingest.isOverloaded, "the stalled writer overloads the pipeline");
    gate.resolve();
    // Until the nodes together got 60 rounds of the pending limit through.
    const TOTAL = 60 * config.max_pending_events;
    await until(() => ingest.counters.committed >= TOTAL, `${TOTAL} events committed`, 6000);
    const perNode = db.$client
      .query("select s.node_id as node, count(*) as n from events e join event_sources s on s.id = e.source_id group by s.node_id")
      .all() as { node: string; n: number }[];
    expect(perNode.length).toBe(NODES);
    // A fair share each, within half again.
    const total = perNode.reduce((n, r) => n + r.n, 0);
    const fair = total / NODES;
    expect(perNode.filter((r) => r.n < fair / 1.5 || r.n > fair * 1.5)).toEqual([]);
  } finally {
    gate.resolve();
    for (const n of nodes) {
      n.stop = true;
      n.socket.end();
    }
    await stop();
  }
});
