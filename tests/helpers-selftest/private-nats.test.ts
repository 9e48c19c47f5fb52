/**
 * The private NATS servers that scale-out tests stop and kill: one server's JetStream stores and
 * delivers; a cluster of three keeps acknowledging a replicated stream when its leader is killed.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { AckPolicy, jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { startPrivateNats } from "../helpers/private-nats";

async function fetchAll(js: JetStreamClient, stream: string, n: number): Promise<string[]> {
  const consumer = await js.consumers.get(stream, "reader");
  const got: string[] = [];
  while (got.length < n) {
    const batch = await consumer.fetch({ max_messages: n - got.length, expires: 5000 });
    let any = false;
    for await (const m of batch) {
      any = true;
      got.push(m.string());
      m.ack();
    }
    if (!any) break;
  }
  return got;
}

test("a private server: JetStream stores what is published and a consumer fetches it; destroy removes it", async () => {
  const nats = await startPrivateNats();
  try {
    expect(nats.urls).toEqual([nats.servers[0]!.url]);
    expect(nats.urls[0]).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    expect(nats.urls[0]).not.toBe("nats://127.0.0.1:4222");
    const nc = await connect({ servers: nats.urls });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "events", subjects: ["events.>"] });
    await jsm.consumers.add("events", { durable_name: "reader", ack_policy: AckPolicy.Explicit });
    const js = jetstream(nc);
    const acks = [await js.publish("events.a", "one"), await js.publish("events.b", "two")];
    expect(acks.map((a) => [a.stream, a.seq])).toEqual([["events", 1], ["events", 2]]);
    expect(await fetchAll(js, "events", 2)).toEqual(["one", "two"]);
    await nc.close();

    await nats.servers[0]!.stop();
    expect(nats.servers[0]!.running()).toBe(false);
    const refused = await connect({ servers: nats.urls, reconnect: false, timeout: 2000 }).then((c) => c.close().then(() => null), (e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    await nats.servers[0]!.start();
    const again = await connect({ servers: nats.urls });
    expect((await (await jetstreamManager(again)).streams.info("events")).state.messages).toBe(2);
    await again.close();
  } finally {
    await nats.destroy();
  }
  expect(existsSync(nats.dir)).toBe(false);
});

test("a cluster of three: a stream with three replicas keeps acknowledging after its leader is killed", async () => {
  await using nats = await startPrivateNats({ cluster: 3 });
  expect(nats.urls).toHaveLength(3);
  expect(new Set(nats.servers.map((s) => s.name)).size).toBe(3);
  const nc = await connect({ servers: nats.urls, reconnectTimeWait: 100 });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.add({ name: "events", subjects: ["events.>"], num_replicas: 3 });
    expect(info.config.num_replicas).toBe(3);
    const js = jetstream(nc, { timeout: 2000 });
    expect((await js.publish("events.x", "before")).seq).toBe(1);

    const leaderName = (await jsm.streams.info("events")).cluster?.leader;
    const leader = nats.servers.find((s) => s.name === leaderName);
    expect(leader).toBeDefined();
    await leader!.kill();
    expect(leader!.running()).toBe(false);

    // The two others elect a new leader; until then a publish finds no responder, so it is
    // retried (the same message id: stored once however many attempts reach it).
    let ack = null;
    const failures = new Set<string>();
    for (const deadline = Date.now() + 30_000; !ack && Date.now() < deadline; ) {
      ack = await js.publish("events.x", "after", { msgID: "after-1" }).catch((e: Error) => {
        failures.add(String(e));
        return null;
      });
      if (!ack) await Bun.sleep(100);
    }
    expect({ seq: ack?.seq, failures: ack ? [] : [...failures] }).toEqual({ seq: 2, failures: [] });
    // Read from the new stream leader, the two copies that are left.
    const stored = await Promise.all([1, 2].map((seq) => jsm.streams.getMessage("events", { seq })));
    expect(stored.map((m) => m?.string())).toEqual(["before", "after"]);
    const now = await jsm.streams.info("events");
    expect(now.cluster?.leader).not.toBe(leaderName);
    expect(now.state.messages).toBe(2);

    await leader!.start();
    expect(leader!.running()).toBe(true);
  } finally {
    await nc.close();
  }
});
