/**
 * Where several instances (docs/scale-out.md) plug into Core's seams: the pipeline's writer
 * channel (batches to JetStream), the in-process message bus (the bridge), the command router's
 * remote delivery, the outputs' and rules' reload and commit signals, and the writer role.
 * An instance alone never loads this file's imports.
 */
import type { CoreConfig } from "../config";
import type { MessageBus } from "../core/bus";
import type { Ingest } from "../core/ingest/types";
import type { Registry } from "../core/registry";
import type { Logger } from "../log";
import type { CommandRouter } from "../modules/commands";
import { startBridge, type BridgeHandle } from "./bridge";
import { connectBus, maxPayload, type Bus } from "./connect";
import type { Role } from "./names";
import { syncReaders } from "./reader-sync";
import { ENVELOPE_ROOM } from "./wire";
import { startWriterRole } from "./writer-role";

/**
 * Joins the bus. Every event must fit in one message of the bus, or its batch could never be
 * published: `max_message_bytes` is lowered to fit, so a longer line is refused at the socket
 * (too_large), as any line past the limit is.
 */
export async function joinBus(config: CoreConfig, log: Logger): Promise<Bus> {
  const bus = await connectBus(config, log.child({ component: "bus" }));
  const payload = maxPayload(bus.nc);
  const fit = payload - ENVELOPE_ROOM;
  if (config.max_message_bytes > fit) {
    log.warn({ max_message_bytes: fit, configured: config.max_message_bytes, max_payload: payload }, "max_message_bytes lowered so that every event fits in one message of the bus (raise the NATS servers' max_payload for longer ones)");
    config.max_message_bytes = fit;
  }
  return bus;
}

/** The readers (outputs, rules) whose definitions and commits the instances share. */
export interface SharedReaders {
  committed(lastId: number): void;
  reload(): Promise<void>;
  /** Set to what tells the other instances that a definition changed here. */
  setOnChange(changed: () => void): void;
}

export interface ClusterPlug {
  readonly bus: Bus;
  readonly bridge: BridgeHandle;
  readonly roles: Set<Role>;
  /** Why the writer role cannot store events now, or null (also null without the role). */
  writerProblem(): string | null;
  /**
   * Shares the readers' commits and definition changes with the other instances. Called once
   * they started: a reload must not start an output of the database before those of the config file.
   */
  shareReaders(readers: SharedReaders): void;
  /** Stops the bridge and the readers' sharing. */
  stop(): Promise<void>;
  /**
   * Stops the writer role: after the listeners and the pipeline, so that what this instance
   * published is still stored by it when it is the only writer.
   */
  stopWriter(): Promise<void>;
}

export async function plugCluster(o: { bus: Bus; roles: Set<Role>; config: CoreConfig; messages: MessageBus; registry: Registry; router: CommandRouter; ingest: Ingest; log: Logger }): Promise<ClusterPlug> {
  const { bus, roles, ingest, log } = o;
  const bridge = startBridge({ bus, messages: o.messages, registry: o.registry, router: o.router, roles: [...roles], logger: log.child({ component: "cluster" }), counters: () => ingest.counters });
  // Events the writers drop as stored before count with those the sockets skip: nothing is dropped unseen.
  const writer = roles.has("writer")
    ? await startWriterRole({ bus, pgUrl: o.config.db, config: o.config, logger: log.child({ component: "writer" }), onDuplicates: (n) => void (ingest.counters.duplicates += n) }).catch(async (e) => {
        await bridge.stop();
        throw e;
      })
    : null;
  let sync: ReturnType<typeof syncReaders> | null = null;
  return {
    bus,
    bridge,
    roles,
    writerProblem: () => writer?.problem() ?? null,
    shareReaders: (readers) => {
      sync = syncReaders(bus, { committed: (id) => readers.committed(id), reload: () => readers.reload() }, log.child({ component: "outputs" }));
      const s = sync;
      readers.setOnChange(() => s.changed());
    },
    stop: async () => {
      sync?.stop();
      await bridge.stop();
    },
    stopWriter: async () => {
      await writer?.stop();
    },
  };
}
