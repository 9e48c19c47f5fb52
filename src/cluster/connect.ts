/**
 * The connection to the bus (NATS with JetStream, @nats-io/transport-node and
 * @nats-io/jetstream, the maintained clients): connects to any of the configured servers,
 * reconnects for ever once connected, and makes sure the event stream exists.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { Logger } from "../log";
import { ClusterNames, instanceId } from "./names";

export interface BusConfig {
  /** Comma-separated NATS URLs. */
  bus: string;
  cluster: string;
  bus_replicas: number;
}

export interface Bus {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: ClusterNames;
  /** This process's name on the bus. */
  readonly instance: string;
  close(): Promise<void>;
}

/** The servers' max_payload (NATS's default, 1 MiB, until the connection has it). */
export const maxPayload = (nc: NatsConnection): number => nc.info?.max_payload ?? 1024 * 1024;

export const busServers = (bus: string): string[] =>
  bus
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** How long a duplicate publish (same message id, a retry after a lost PubAck) is recognised. */
const DUPLICATE_WINDOW_NS = 2 * 60 * 1e9;

/**
 * Servers started together with Core (compose) may not answer yet: Core waits for them up to
 * START_WAIT_MS, then gives up with the servers' names and the last error.
 */
const START_WAIT_MS = 30_000;

async function connectWithin(servers: string[], instance: string, logger: Logger): Promise<NatsConnection> {
  const deadline = Date.now() + START_WAIT_MS;
  for (let waited = false; ; waited = true) {
    try {
      return await connect({ servers, name: `honeybee-${instance}`, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 5000 });
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`cannot reach the bus at ${servers.join(", ")}: ${(e as Error).message}`);
      if (!waited) logger.warn({ servers, err: (e as Error).message }, `the bus does not answer yet; trying for ${START_WAIT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export async function connectBus(config: BusConfig, logger: Logger): Promise<Bus> {
  const servers = busServers(config.bus);
  const instance = instanceId();
  const names = new ClusterNames(config.cluster);
  const nc = await connectWithin(servers, instance, logger);
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") logger.warn({ server: s.server }, "lost the bus; reconnecting");
      else if (s.type === "reconnect") logger.info({ server: s.server }, "bus connection back");
    }
  })();
  try {
    const jsm = await jetstreamManager(nc, { timeout: 10_000 });
    const stream = {
      name: names.eventStream,
      subjects: [names.ingestAll],
      // Each batch is for one writer, removed once a writer acknowledged it (after its commit).
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: config.bus_replicas,
      duplicate_window: DUPLICATE_WINDOW_NS,
    };
    await jsm.streams.add(stream).catch(async (e) => {
      if (!/already in use/i.test((e as Error).message)) throw e;
      await jsm.streams.update(stream.name, { subjects: stream.subjects, num_replicas: stream.num_replicas, duplicate_window: stream.duplicate_window });
    });
    const js = jetstream(nc, { timeout: 30_000 });
    logger.info({ servers, cluster: config.cluster, instance }, "joined the bus");
    return {
      nc,
      js,
      jsm,
      names,
      instance,
      close: async () => {
        await nc.drain().catch(() => nc.close());
      },
    };
  } catch (e) {
    await nc.close().catch(() => {});
    throw new Error(`the bus at ${servers.join(", ")} has no usable JetStream: ${(e as Error).message}`);
  }
}
