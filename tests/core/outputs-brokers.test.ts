import { describe, expect, test } from "bun:test";
import { connect as natsConnect } from "@nats-io/transport-node";
import { connectAsync } from "mqtt";
import { parseWithIds } from "../../src/protocol/json";
import { startTestCore } from "../helpers";
import { Relay, failedAtLeast, numbered, outputStatus, sendEvents, waitFor } from "../helpers/outputs";

// The machine's brokers (docs/outputs.md, "Testing"); a relay in front of each plays the broker going away.
const MOSQUITTO = 1883;
const NATS = 4222;
const FAST_RETRY = { min_backoff_ms: 20, max_backoff_ms: 100 };
const run = crypto.randomUUID().slice(0, 8);

describe("MQTT output against Mosquitto", () => {
  test("QoS 1 per event on its topic; the broker away for a while loses nothing and repeats nothing", async () => {
    using relay = new Relay(MOSQUITTO).up();
    const sub = await connectAsync(`mqtt://127.0.0.1:${MOSQUITTO}`, { clean: true });
    const got: { topic: string; event: any }[] = [];
    sub.on("message", (topic, payload) => got.push({ topic, event: parseWithIds(payload.toString()) }));
    await sub.subscribeAsync(`hb-test-${run}/#`, { qos: 1 });
    try {
      await using core = await startTestCore({
        outputs: [{ name: "mqtt", type: "mqtt", url: `mqtt://127.0.0.1:${relay.port}`, topic: `hb-test-${run}/{pot_type}/{event_type}`, batch_size: 5, retry: FAST_RETRY, timeout_ms: 2000 }],
      });
      await sendEvents(core, numbered(1, 8));
      await waitFor(() => got.length >= 8, "8 messages");
      // At least once: a batch whose acknowledgement the connection loss cuts off is sent again.
      await waitFor(async () => (await outputStatus(core, "mqtt")).lag === 0, "the broker's acknowledgements");
      relay.down();
      await sendEvents(core, numbered(9, 12));
      await failedAtLeast(core, "mqtt", 2);
      relay.up();
      await waitFor(() => got.length >= 20, "the 12 events sent while the broker was away");
      await waitFor(async () => (await outputStatus(core, "mqtt")).lag === 0, "lag 0");
      expect(got.map((g) => g.event.data.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(got[0]!.topic).toBe(`hb-test-${run}/cowrie/cowrie.login.failed`);
      expect(got[0]!.event).toMatchObject({ event_type: "cowrie.login.failed", pot_id: "ssh-01", src_ip: "203.0.113.7" });
    } finally {
      await sub.endAsync();
    }
  });
});

describe("NATS output against nats-server", () => {
  test("one message per event on a subject per event type; the server away for a while loses nothing and repeats nothing", async () => {
    using relay = new Relay(NATS).up();
    const sub = await natsConnect({ servers: `nats://127.0.0.1:${NATS}` });
    const got: { subject: string; event: any }[] = [];
    const subscription = sub.subscribe(`hb-test-${run}.>`, {
      callback: (_err, msg) => {
        got.push({ subject: msg.subject, event: parseWithIds(msg.string()) });
      },
    });
    await sub.flush();
    try {
      await using core = await startTestCore({
        outputs: [{ name: "nats", type: "nats", servers: `nats://127.0.0.1:${relay.port}`, subject: `hb-test-${run}.{event_type}`, batch_size: 5, retry: FAST_RETRY, timeout_ms: 2000 }],
      });
      await sendEvents(core, numbered(1, 8));
      await waitFor(() => got.length >= 8, "8 messages");
      await waitFor(async () => (await outputStatus(core, "nats")).lag === 0, "the server's flush");
      relay.down();
      await sendEvents(core, numbered(9, 12));
      await failedAtLeast(core, "nats", 2);
      relay.up();
      await waitFor(() => got.length >= 20, "the 12 events sent while the server was away");
      await waitFor(async () => (await outputStatus(core, "nats")).lag === 0, "lag 0");
      expect(got.map((g) => g.event.data.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(got[0]!.subject).toBe(`hb-test-${run}.cowrie.login.failed`);
    } finally {
      subscription.unsubscribe();
      await sub.close();
    }
  });
});
