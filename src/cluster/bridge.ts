/**
 * Carries Core's message bus (src/core/bus.ts) between instances over NATS:
 * - registry changes and command results made here go out on `<cluster>.feed.<kind>.<node>...`
 *   (a pot's removal on `<cluster>.registry.PotRemoved`), with this instance's name in a header;
 * - what other instances publish there is applied to this instance's registry (which puts it
 *   on the local bus, so this instance's live feed shows it); committed events (the writers
 *   publish those) and command results go on the local bus as they are.
 * Commands for a node another instance holds go by request to `<cluster>.node.<node>.command`;
 * the instance with the connection answers (src/modules/commands/router.ts `deliver`).
 */
import { headers, type Msg } from "@nats-io/transport-node";
import type { Logger } from "../log";
import type { CommandRecord } from "../db/command-store";
import { parseWithIds, stringify, toU64 } from "../protocol/json";
import type { MessageBus, BusKind } from "../core/bus";
import type { CommandRouter, DeliverResult } from "../modules/commands";
import type { Registry } from "../core/registry";
import { RateLimitedLog } from "../net/rate-limited-log";
import type { Bus } from "./connect";
import { Presence } from "./presence";
import type { IngestCounters } from "../core/ingest/types";

const INSTANCE_HEADER = "Honeybee-Instance";
const FORWARDED = new Set<BusKind>(["NodeRegistration", "NodeStatusUpdate", "PotStatusUpdate", "NodeDrop", "CommandResult", "PotRemoved"]);
/** How long an issuer waits for the holder's answer before calling the node unreachable. */
const DELIVER_TIMEOUT_MS = 5000;

export interface BridgeOptions {
  bus: Bus;
  messages: MessageBus;
  registry: Registry;
  router: CommandRouter;
  roles: string[];
  logger: Logger;
  /** This instance's ingest counters, told to the others with each beat (deployment-wide stats). */
  counters?: () => IngestCounters;
}

export interface BridgeHandle {
  readonly presence: Presence;
  stop(): Promise<void>;
}

export function startBridge(opts: BridgeOptions): BridgeHandle {
  const { bus, messages, registry, router, logger } = opts;
  const { nc, names } = bus;
  const warn = new RateLimitedLog(logger);
  const presence = new Presence(bus, registry, opts.roles, logger, opts.counters);
  /** Set while a remote change is applied: the local bus carries it to the feed, not back out. */
  let applying = false;

  const stopForwarding = messages.subscribe(
    (m) => {
      if (applying || !FORWARDED.has(m.kind)) return;
      const subject = m.kind === "PotRemoved" ? names.registry("PotRemoved") : names.feedSubject(m.kind, m.meta.node_id, m.meta.pot_id);
      const h = headers();
      h.set(INSTANCE_HEADER, bus.instance);
      try {
        nc.publish(subject, stringify(m.payload ?? null), { headers: h });
      } catch (e) {
        warn.warn("publish", { err: (e as Error).message, kind: m.kind }, "could not tell the other instances of a registry change");
      }
    },
    (kind) => FORWARDED.has(kind),
  );

  const apply = (kind: string, from: string, payload: any) => {
    applying = true;
    try {
      switch (kind) {
        case "PotEvent":
          // Through this instance's bus, as its own commits would go on one instance: the feed and any in-process listener see them.
          if (messages.wants("PotEvent")) for (const rec of payload as any[]) messages.publish("PotEvent", rec, { node_id: rec.node_id, pot_id: rec.pot_id, event_type: rec.event_type });
          break;
        case "NodeRegistration":
          presence.moved(payload.node_id, from);
          registry.applyRemoteRegistration(payload);
          break;
        case "NodeStatusUpdate":
          // A status from an instance that no longer holds the node (it moved) is stale.
          if ((presence.holderOf(payload.node_id) ?? from) === from) {
            registry.applyRemoteStatus(payload.node_id, payload.status);
            presence.released(payload.node_id, from, payload.status);
          }
          break;
        case "PotStatusUpdate":
          registry.applyRemotePot(payload);
          break;
        case "NodeDrop":
          if (payload.node_id !== null) registry.applyRemoteDrop(payload.node_id);
          break;
        case "CommandResult":
          messages.publish("CommandResult", payload, { node_id: payload.node_id });
          break;
        case "PotRemoved":
          registry.applyRemotePotRemoved(payload.node_id, payload.pot_id);
          break;
      }
    } finally {
      applying = false;
    }
  };

  // `<cluster>.feed.<kind>.<node>...` and `<cluster>.registry.<kind>`: the kind is the third token.
  const onMessage = (err: Error | null, m: Msg) => {
    if (err) return;
    const from = m.headers?.get(INSTANCE_HEADER) ?? "";
    // What this instance published went to its own feed already; committed events come from writers, with no header.
    if (from === bus.instance) return;
    const [, , kind = "", node] = m.subject.split(".");
    try {
      // NodeDrop has no payload: its node is in the subject.
      apply(kind, from, kind === "NodeDrop" ? { node_id: toU64(node) } : parseWithIds(m.string()));
    } catch (e) {
      warn.warn(`bad:${kind}`, { err: (e as Error).message, subject: m.subject }, "skipped a message from the bus that could not be read");
    }
  };
  const feedSub = nc.subscribe(names.feedAll, { callback: onMessage });
  const registrySub = nc.subscribe(names.registryAll, { callback: onMessage });

  // Commands for nodes this instance holds. Every instance listens on the wildcard; only the
  // holder answers (an instance without the connection stays silent, the issuer times out).
  const commandSub = nc.subscribe(names.nodeCommand("*"), {
    callback: (err, m) => {
      if (err) return;
      const node = toU64(m.subject.split(".")[2]);
      if (node === null || !registry.link(node)) return;
      let answer: DeliverResult;
      try {
        const rec = parseWithIds(m.string()) as CommandRecord & { node_id: bigint };
        answer = router.deliver({ ...rec, node_id: node });
      } catch (e) {
        answer = { ok: false, message: `unreadable command from another instance: ${(e as Error).message}` };
      }
      m.respond(stringify(answer));
    },
  });
  router.useRemote({
    heldElsewhere: (node) => presence.holderOf(node) !== null,
    send: async (record) => {
      try {
        const reply = await nc.request(names.nodeCommand(record.node_id), stringify(record), { timeout: DELIVER_TIMEOUT_MS });
        return reply.json<DeliverResult>();
      } catch (e) {
        return { ok: false, message: `the instance that held it did not answer (${(e as Error).message})` };
      }
    },
  });

  presence.start();
  return {
    presence,
    stop: async () => {
      presence.stop();
      stopForwarding();
      for (const s of [feedSub, registrySub, commandSub]) s.unsubscribe();
    },
  };
}
