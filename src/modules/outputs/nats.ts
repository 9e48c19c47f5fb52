/**
 * NATS output (@nats-io/transport-node, the maintained client). One message per event, the
 * event as JSON, on a subject made from the template (`honeybee.events.cowrie.login.failed`:
 * the event type's dots become subject tokens, so `honeybee.events.cowrie.>` subscribes to a
 * kind). A batch counts once a flush (PING/PONG) after it came back: the server has every
 * message. At least once to the server; core NATS keeps nothing for subscribers that are
 * away (use a JetStream stream on the subjects for that).
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { stringify } from "../../protocol/json";
import { eventRecord } from "./event";
import type { NatsOutput } from "./model";
import { fillTemplate, withTimeout, type Sink } from "./sink";

/** Subject tokens must not hold wildcards or whitespace; dots inside a value stay (they split tokens on purpose). */
const subjectSafe = (s: string) => s.replace(/[*>\s]/g, "_").replace(/^\.+|\.+$/g, "").replace(/\.{2,}/g, ".") || "_";

export function natsSink(def: NatsOutput): Sink {
  const timeout = def.timeout_ms ?? 10_000;
  const subject = def.subject ?? "honeybee.events.{event_type}";
  let nc: NatsConnection | null = null;
  let closed = false;

  const drop = () => {
    nc?.close().catch(() => {});
    nc = null;
  };

  return {
    async send(events) {
      if (closed) throw new Error("output stopped");
      if (!nc || nc.isClosed()) {
        nc = null;
        nc = await connect({ servers: def.servers, user: def.user, pass: def.pass, token: def.token, reconnect: false, timeout, name: `honeybee-${def.name}` }).catch((e) => {
          throw new Error(`cannot connect to ${[def.servers].flat().join(", ")}: ${(e as Error).message}`);
        });
        if (closed) {
          drop();
          throw new Error("output stopped");
        }
      }
      const c = nc;
      try {
        const encoder = new TextEncoder();
        for (const e of events) c.publish(fillTemplate(subject, e, subjectSafe), encoder.encode(stringify(eventRecord(e))));
        await withTimeout(c.flush(), timeout, `the server did not answer a flush within ${timeout} ms`);
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
