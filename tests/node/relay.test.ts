import { describe, expect, test } from "bun:test";
import { FakeCore } from "../helpers/fake-core";
import { freePort, LineClient, tempDir } from "../helpers";
import type { NodeHandle } from "../../src/node/agent";
import { nodeTest, potOrder, startTestNode } from "./node-helpers";

async function installEmitter(core: FakeCore, node: NodeHandle): Promise<number> {
  const port = freePort();
  const r = await core.command(node.nodeId, { InstallPot: { pot_id: "emitter", honeypot_type: "testpot", config: { listen_port: String(port) }, auto_start: true } });
  if (!r.ok) throw new Error(r.message);
  return port;
}

const seqs = (events: any[]) => events.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("event relay", () => {
  test("stamps node_id (exact u64), pot_id and pot_type, and forwards with EventStreamHello acks", async () => {
    await using t = await nodeTest();
    const { core, node } = t;
    const port = await installEmitter(core, node);
    expect(await potOrder(port, "emit 3")).toEqual({ emitted: 3 });
    await core.waitEvents(3);
    expect(core.hellos).toEqual([{ node_id: node.nodeId, acks: true, spool_id: node.spool.id, first_seq: 0 }]);
    expect(core.events.map(({ message, timestamp, ...e }) => e)).toEqual(
      range(0, 3).map((seq) => ({ eventid: "testpot.event", pot_id: "emitter", seq, src_ip: "10.0.0.1", node_id: node.nodeId, pot_type: "testpot" })),
    );
    await node.forwarder.drained();
    expect(node.spool.pending).toBe(0);
  });

  test("other shapes: Cowrie's honeybee_honeypot_id, PotEvent envelopes, relay acks, garbage dropped", async () => {
    await using t = await nodeTest();
    const { core, node } = t;
    await installEmitter(core, node);
    using pot = await LineClient.connect(node.ports.relay);
    pot.send("EventStreamHello", { acks: true });
    pot.sendRaw('{"eventid":"cowrie.login.failed","honeybee_honeypot_id":"emitter","username":"root"}\nnot json\n');
    pot.sendRaw('{"version":2,"message":{"PotEvent":{"pot_id":"emitter","event_type":"x","data":{}}}}{"eventid":"glued","pot_id":"nowhere"}\n');
    // One ack per chunk read; the last one counts every line after the hello.
    await pot.next((m) => m.message?.EventAck?.seq === 3);
    await core.waitEvents(3);
    expect(core.events).toEqual([
      { eventid: "cowrie.login.failed", honeybee_honeypot_id: "emitter", username: "root", node_id: node.nodeId, pot_id: "emitter", pot_type: "testpot" },
      { version: 2, message: { PotEvent: { pot_id: "emitter", event_type: "x", data: {}, node_id: node.nodeId, pot_type: "testpot" } } },
      { eventid: "glued", pot_id: "nowhere", node_id: node.nodeId },
    ]);
    expect(node.relay.counters).toMatchObject({ accepted: 3, rejected: 1 });
  });

  test("Core's event socket goes away while 10,000 events are emitted: all arrive once, in order", async () => {
    await using t = await nodeTest();
    const { core, node } = t;
    const port = await installEmitter(core, node);
    const emitted = potOrder(port, "emit 10000");
    core.stopEvents();
    expect(await emitted).toEqual({ emitted: 10000 });
    core.startEvents();
    await core.waitEvents(10000);
    await node.forwarder.drained();
    expect(seqs(core.events)).toEqual(range(0, 10000));
    expect(node.spool.pending).toBe(0);
  });

  test("with a small window, every ack lets the next events go", async () => {
    await using t = await nodeTest({ forward_window: 7 });
    const port = await installEmitter(t.core, t.node);
    expect(await potOrder(port, "emit 1000")).toEqual({ emitted: 1000 });
    await t.node.forwarder.drained();
    expect(seqs(t.core.events)).toEqual(range(0, 1000));
  });

  test("the spool survives a node restart and is replayed", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    core.stopEvents();
    // stop() is idempotent: the dispose only matters if the test fails before it stops the node.
    await using node = await startTestNode(core, dir.path);
    await core.next("NodeRegistration");
    const port = await installEmitter(core, node);
    expect(await potOrder(port, "emit 500")).toEqual({ emitted: 500 });
    await node.stop();
    expect(node.spool.pending).toBe(500);
    core.startEvents();
    await using again = await startTestNode(core, dir.path);
    await core.waitEvents(500);
    await again.forwarder.drained();
    expect(seqs(core.events)).toEqual(range(0, 500));
  });

  test("a full spool drops the oldest events, counts them, and reports an Alarm", async () => {
    await using t = await nodeTest({ spool_max_bytes: 64 * 1024, spool_segment_bytes: 8 * 1024 });
    const { core, node } = t;
    core.stopEvents();
    const port = await installEmitter(core, node);
    expect(await potOrder(port, "emit 2000")).toEqual({ emitted: 2000 });
    const alarm = await core.next("NodeEvent", (e) => e?.Alarm);
    expect(alarm.Alarm.description).toMatch(/event spool reached its limit of 65536 bytes while Core was unreachable: dropped the \d+ oldest events/);
    core.startEvents();
    // Whatever is left arrives: the newest events, in order, none twice.
    await node.forwarder.drained();
    const dropped = node.spool.droppedTotal;
    expect(dropped).toBeGreaterThan(0);
    expect(seqs(core.events)).toEqual(range(dropped, 2000));
  });
});
