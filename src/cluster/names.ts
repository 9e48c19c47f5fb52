/**
 * Every name a deployment uses on the bus, made from its cluster name (`--cluster`): two
 * deployments, or two test runs, on the same NATS servers never meet. Subjects are
 * dot-separated tokens; stream and consumer names may not hold dots, so they use dashes.
 */
import { hostname } from "node:os";

export const ROLES = ["ingest", "api", "proxy", "writer"] as const;
export type Role = (typeof ROLES)[number];

/** `ingest,api` → the set; the config schema has checked the words already. */
export function parseRoles(list: string): Set<Role> {
  return new Set(list.split(",").map((r) => r.trim()) as Role[]);
}

/** A subject token from any text: no dots, wildcards or whitespace (a pot id may hold them). */
export const subjectToken = (s: string): string => s.replace(/[.*>\s]/g, "_") || "_";

export class ClusterNames {
  constructor(readonly cluster: string) {}

  /** The JetStream stream the ingest instances publish batches of events to. */
  get eventStream(): string {
    return `${this.cluster}-events`;
  }

  /** Where one ingest instance publishes (the stream takes `ingestAll`). */
  ingestSubject(instance: string): string {
    return `${this.cluster}.ingest.${subjectToken(instance)}`;
  }

  get ingestAll(): string {
    return `${this.cluster}.ingest.>`;
  }

  /** The durable consumer every writer instance pulls from: each batch goes to one writer. */
  get writerConsumer(): string {
    return `${this.cluster}-writers`;
  }

  /**
   * The live feed: `<cluster>.feed.<kind>.<node>[.<pot>]`, `_` for a missing node. Committed
   * events are published by the writer that stored them, registry changes by the instance
   * that holds the node; every instance's proxy subscribes to `feedAll`.
   */
  feedSubject(kind: string, nodeId: bigint | string | null | undefined, potId?: string | null): string {
    const node = nodeId === null || nodeId === undefined ? "_" : String(nodeId);
    return potId ? `${this.cluster}.feed.${kind}.${node}.${subjectToken(potId)}` : `${this.cluster}.feed.${kind}.${node}`;
  }

  get feedAll(): string {
    return `${this.cluster}.feed.>`;
  }

  /** Request/reply to the instance that holds a node's control connection (it subscribes while it does). */
  nodeCommand(nodeId: bigint | string): string {
    return `${this.cluster}.node.${nodeId}.command`;
  }

  /** Registry changes that are not feed messages (a pot removed), for the other instances' registries. */
  registry(kind: string): string {
    return `${this.cluster}.registry.${kind}`;
  }

  get registryAll(): string {
    return `${this.cluster}.registry.>`;
  }

  /** A writer's newest committed event id, after each commit: wakes every instance's outputs and rules. */
  get committed(): string {
    return `${this.cluster}.committed`;
  }

  /** An output or alert rule was added or removed over REST: the other instances read the definitions again. */
  get readersChanged(): string {
    return `${this.cluster}.readers.changed`;
  }

  /** Each instance's heartbeat, with the nodes it holds: presence. */
  get presence(): string {
    return `${this.cluster}.presence`;
  }
}

/** This process's name on the bus: host, pid and a random part (a restarted process is a new instance). */
export function instanceId(): string {
  const rand = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36);
  return subjectToken(`${hostname()}-${process.pid}-${rand}`).replace(/[^A-Za-z0-9_-]/g, "_");
}
