/**
 * Presence: which instance holds which node's control connection. Each instance says so
 * every beat on `<cluster>.presence`; a registration announced by another instance moves the
 * node at once (a fail-over must not wait a beat). An instance silent for three beats is
 * gone: its nodes become Unknown until they register elsewhere (node agents take several
 * Core addresses and fail over).
 *
 * Each beat also carries the instance's ingest counters, so that the stats any instance shows
 * are the deployment's: the sum over the instances heard from lately (an instance that is gone
 * takes its counts with it, as a restarted Core alone starts from zero).
 */
import { stringify } from "../protocol/json";
import type { Logger } from "../log";
import type { Registry } from "../core/registry";
import type { IngestCounters } from "../core/ingest/types";
import type { Bus } from "./connect";

export const BEAT_MS = 2000;
const GONE_AFTER_BEATS = 3;

interface Beat {
  instance: string;
  nodes: string[];
  roles: string[];
  counters?: IngestCounters;
}

/** Statuses that say no connection exists anywhere. */
const DISCONNECTED_STATUSES = new Set(["Unknown", "Stopped"]);

export class Presence {
  /** node → the other instance holding it. */
  private readonly holders = new Map<bigint, string>();
  /** other instance → when it last beat. */
  private readonly seen = new Map<string, number>();
  /** other instance → the ingest counters of its last beat. */
  private readonly counted = new Map<string, IngestCounters>();
  private readonly startedAt = Date.now();
  private timer: ReturnType<typeof setInterval> | null = null;
  private sub: { unsubscribe(): void } | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly registry: Registry,
    private readonly roles: string[],
    private readonly logger: Logger,
    private readonly counters?: () => IngestCounters,
  ) {}

  start(): void {
    this.sub = this.bus.nc.subscribe(this.bus.names.presence, {
      callback: (err, msg) => {
        if (err) return;
        let beat: Beat;
        try {
          beat = msg.json<Beat>();
        } catch {
          return;
        }
        if (beat.instance === this.bus.instance || !Array.isArray(beat.nodes)) return;
        if (!this.seen.has(beat.instance)) this.logger.info({ instance: beat.instance, roles: beat.roles }, "instance joined");
        this.seen.set(beat.instance, Date.now());
        if (isCounters(beat.counters)) this.counted.set(beat.instance, beat.counters);
        const listed = new Set<bigint>();
        for (const id of beat.nodes) {
          const node = BigInt(id);
          listed.add(node);
          if (!this.registry.link(node)) this.holders.set(node, beat.instance);
        }
        for (const [node, holder] of this.holders) if (holder === beat.instance && !listed.has(node)) this.holders.delete(node);
      },
    });
    this.beat();
    this.timer = setInterval(() => {
      this.beat();
      this.sweep();
    }, BEAT_MS);
    this.timer.unref?.();
  }

  /** A node registered with another instance (its NodeRegistration came over the bus). */
  moved(node: bigint, instance: string): void {
    this.holders.set(node, instance);
    this.seen.set(instance, Math.max(this.seen.get(instance) ?? 0, Date.now()));
  }

  /** The holder said the node's connection ended (Unknown, Stopped). */
  released(node: bigint, instance: string, status: string): void {
    if (DISCONNECTED_STATUSES.has(status) && this.holders.get(node) === instance) this.holders.delete(node);
  }

  /** The other instance holding the node, or null (not held elsewhere, or its holder is gone). */
  holderOf(node: bigint): string | null {
    return this.holders.get(node) ?? null;
  }

  /** Instances heard from lately, this one included. */
  instances(): string[] {
    return [this.bus.instance, ...this.seen.keys()];
  }

  /** `own` plus the counters of every other instance heard from lately. */
  deploymentCounters(own: IngestCounters): IngestCounters {
    const sum = { ...own };
    for (const [instance, c] of this.counted) {
      if (!this.seen.has(instance)) continue;
      for (const k of COUNTER_KEYS) sum[k] += c[k];
    }
    return sum;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sub?.unsubscribe();
  }

  private beat(): void {
    const beat: Beat = { instance: this.bus.instance, nodes: this.registry.heldNodes().map(String), roles: this.roles, counters: this.counters?.() };
    try {
      this.bus.nc.publish(this.bus.names.presence, stringify(beat));
    } catch {
      // Closed or reconnecting: the next beat tries again.
    }
  }

  private sweep(): void {
    const now = Date.now();
    const gone = now - GONE_AFTER_BEATS * BEAT_MS - BEAT_MS / 2;
    for (const [instance, at] of this.seen) {
      if (at >= gone) continue;
      this.seen.delete(instance);
      this.counted.delete(instance);
      const nodes = [...this.holders].filter(([, h]) => h === instance).map(([n]) => n);
      for (const n of nodes) this.holders.delete(n);
      this.logger.warn({ instance, nodes: nodes.map(String) }, "instance gone silent; its nodes are Unknown until they connect elsewhere");
    }
    // After the first beats of every live instance have come, a node said to be connected that
    // nobody holds lost its instance (or the whole deployment restarted): it is Unknown.
    if (now - this.startedAt < GONE_AFTER_BEATS * BEAT_MS) return;
    for (const row of this.registry.listNodes()) {
      if (DISCONNECTED_STATUSES.has(row.status) || this.registry.link(row.node_id) || this.holders.has(row.node_id)) continue;
      this.registry.applyRemoteStatus(row.node_id, "Unknown", true);
    }
  }
}

const COUNTER_KEYS = ["received", "committed", "rejected", "connections", "pending", "duplicates", "unreadable_timestamps"] as const satisfies readonly (keyof IngestCounters)[];

/** Another instance's counters as its beat carried them: each a finite number, or not used. */
function isCounters(c: unknown): c is IngestCounters {
  return typeof c === "object" && c !== null && COUNTER_KEYS.every((k) => Number.isFinite((c as Record<string, unknown>)[k]));
}
