/**
 * MQTT output (the `mqtt` package, MQTT.js: the maintained client). One message per event,
 * the event as JSON, on a topic made from the template. With QoS 1 or 2 a batch counts once
 * the broker acknowledged every message: at least once (a batch the broker took only part of
 * is sent again whole). QoS 0: written to the connection, best effort.
 */
import { connectAsync, type MqttClient } from "mqtt";
import { stringify } from "../../protocol/json";
import { eventRecord } from "./event";
import type { MqttOutput } from "./model";
import { fillTemplate, withTimeout, type Sink } from "./sink";

/** MQTT topic levels must not hold wildcards or the level separator. */
const topicSafe = (s: string) => s.replace(/[+#/\0]/g, "_");

export function mqttSink(def: MqttOutput): Sink {
  const timeout = def.timeout_ms ?? 10_000;
  const topic = def.topic ?? "honeybee/events/{pot_type}/{event_type}";
  let client: MqttClient | null = null;
  let closed = false;

  const drop = () => {
    client?.end(true);
    client = null;
  };

  return {
    async send(events) {
      if (closed) throw new Error("output stopped");
      if (!client?.connected) {
        drop();
        // Reconnecting is the reader's job (with its backoff): MQTT.js's own would queue
        // messages out of our sight.
        client = await withTimeout(
          connectAsync(def.url, { reconnectPeriod: 0, connectTimeout: timeout, username: def.username, password: def.password, clientId: def.client_id, clean: true }),
          timeout,
          `no connection to ${def.url} within ${timeout} ms`,
        ).catch((e) => {
          throw new Error(`cannot connect to ${def.url}: ${(e as Error).message}`);
        });
        client.on("error", () => {});
        if (closed) {
          drop();
          throw new Error("output stopped");
        }
      }
      const c = client;
      const lost = new Promise<never>((_, reject) => c.once("close", () => reject(new Error(`connection to ${def.url} closed`))));
      lost.catch(() => {});
      try {
        await withTimeout(
          Promise.race([
            Promise.all(events.map((e) => c.publishAsync(fillTemplate(topic, e, topicSafe), stringify(eventRecord(e)), { qos: def.qos ?? 1, retain: def.retain ?? false }))),
            lost,
          ]),
          timeout,
          `the broker did not acknowledge within ${timeout} ms`,
        );
      } catch (e) {
        drop();
        throw e;
      }
    },
    async close() {
      closed = true;
      drop();
    },
  };
}
