/**
 * `GET /metrics` in the Prometheus text exposition format, through prom-client (the Prometheus
 * client most Node/Bun services use; it writes the format, escapes label values and keeps
 * histogram buckets right, so nothing here formats text by hand).
 *
 * Each Core has its own registry (tests run several Cores in one process). Values Core
 * already counts (ingest counters, WebSocket clients, nodes) are read when scraped; batch
 * sizes and lag are observed as batches commit. A scrape from loopback is never rate-limited
 * (auth/index.ts); with API tokens on, it needs the read role like any GET.
 */
import { Elysia } from "elysia";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { IngestCounters } from "../../core/ingest/types";

const MAX_TYPE_LABELS = 200;

export interface MetricsSources {
  ingest: () => IngestCounters;
  /** WebSocket clients of the proxy and how many were cut off for not reading. */
  websocket: () => { clients: number; cutOff: number };
  /** Status of every registered node. */
  nodeStatuses: () => string[];
  /** Each output's delivery counters (docs/outputs.md). */
  outputs?: () => { name: string; lag: number; delivered: number; failed: number; dropped: number }[];
}

export class CoreMetrics {
  readonly registry = new Registry();
  private readonly batchSize: Histogram;
  private readonly lag: Histogram;
  private readonly byType: Counter<"event_type">;
  private readonly rejects: Counter<"code">;
  private readonly typesSeen = new Set<string>();
  private sources: MetricsSources | null = null;

  constructor() {
    const registers = [this.registry];
    const fromIngest = (name: string, help: string, pick: (c: IngestCounters) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect: () => {
          const c = this.sources?.ingest();
          if (!c) return;
          const metric = this.registry.getSingleMetric(name) as Counter;
          metric.reset();
          metric.inc(pick(c));
        },
      });
    fromIngest("honeybee_events_received_total", "Messages offered as events (event socket and control channel) since Core started.", (c) => c.received);
    fromIngest("honeybee_events_committed_total", "Events committed to the database since Core started.", (c) => c.committed);
    fromIngest("honeybee_events_duplicates_total", "Events a node sent again that were stored before (same spool and position): skipped, or dropped by this instance's writer.", (c) => c.duplicates);
    const gauge = (name: string, help: string, read: (s: MetricsSources) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect: () => {
          if (this.sources) (this.registry.getSingleMetric(name) as Gauge).set(read(this.sources));
        },
      });
    gauge("honeybee_ingest_pending_events", "Events received and not yet committed.", (s) => s.ingest().pending);
    gauge("honeybee_event_connections", "Open event socket connections.", (s) => s.ingest().connections);
    gauge("honeybee_websocket_clients", "WebSocket clients of the live feed.", (s) => s.websocket().clients);
    new Counter({
      name: "honeybee_websocket_cutoffs_total",
      help: "WebSocket clients cut off because they did not read fast enough.",
      registers,
      collect: () => {
        if (!this.sources) return;
        const m = this.registry.getSingleMetric("honeybee_websocket_cutoffs_total") as Counter;
        m.reset();
        m.inc(this.sources.websocket().cutOff);
      },
    });
    new Gauge({
      name: "honeybee_nodes",
      help: "Registered nodes by status.",
      labelNames: ["status"],
      registers,
      collect: () => {
        if (!this.sources) return;
        const m = this.registry.getSingleMetric("honeybee_nodes") as Gauge<"status">;
        m.reset();
        const counts = new Map<string, number>();
        for (const s of this.sources.nodeStatuses()) counts.set(s, (counts.get(s) ?? 0) + 1);
        for (const [status, n] of counts) m.set({ status }, n);
      },
    });
    // Per output: how far behind it is, and what it delivered, failed and dropped (docs/outputs.md).
    const perOutput = (name: string, help: string, kind: "gauge" | "counter", pick: (o: NonNullable<ReturnType<NonNullable<MetricsSources["outputs"]>>>[number]) => number) => {
      const Metric = kind === "gauge" ? Gauge : Counter;
      new Metric({
        name,
        help,
        labelNames: ["output"],
        registers,
        collect: () => {
          const outputs = this.sources?.outputs?.();
          if (!outputs) return;
          const m = this.registry.getSingleMetric(name) as Gauge<"output"> | Counter<"output">;
          m.reset();
          for (const o of outputs) {
            if (m instanceof Gauge) m.set({ output: o.name }, pick(o));
            else m.inc({ output: o.name }, pick(o));
          }
        },
      });
    };
    perOutput("honeybee_output_lag_events", "Committed events an output has not delivered yet.", "gauge", (o) => o.lag);
    perOutput("honeybee_output_delivered_total", "Events an output delivered since Core started.", "counter", (o) => o.delivered);
    perOutput("honeybee_output_failed_total", "Failed delivery attempts of an output since Core started.", "counter", (o) => o.failed);
    perOutput("honeybee_output_dropped_total", "Events an output gave up on (retry.max_attempts) since Core started.", "counter", (o) => o.dropped);
    this.batchSize = new Histogram({
      name: "honeybee_ingest_batch_events",
      help: "Events per committed batch.",
      buckets: [1, 16, 128, 1024, 4096, 16384, 65536],
      registers,
    });
    this.lag = new Histogram({
      name: "honeybee_ingest_lag_seconds",
      help: "Time from a batch's first event arriving to its commit (the longest any of its events waited).",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.byType = new Counter({
      name: "honeybee_events_committed_by_type_total",
      help: `Events committed since Core started, by event type (the first ${MAX_TYPE_LABELS} types seen; later ones count as "other").`,
      labelNames: ["event_type"],
      registers,
    });
    this.rejects = new Counter({
      name: "honeybee_events_rejected_total",
      help: "Lines and messages skipped as bad input since Core started, by error code (bad_json, invalid_event, too_deep, message_too_large, internal_error).",
      labelNames: ["code"],
      registers,
    });
    collectDefaultMetrics({ register: this.registry, prefix: "honeybee_" });
  }

  /** Connects the scrape-time values, once the parts of Core that hold them exist. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  committed(events: number, lagSeconds: number, byType: Map<string, number>): void {
    this.batchSize.observe(events);
    this.lag.observe(lagSeconds);
    for (const [type, n] of byType) {
      // Event types come from the senders: a bounded label set keeps a hostile one from growing the scrape without end.
      if (!this.typesSeen.has(type) && this.typesSeen.size < MAX_TYPE_LABELS) this.typesSeen.add(type);
      this.byType.inc({ event_type: this.typesSeen.has(type) ? type : "other" }, n);
    }
  }

  rejected(code: string): void {
    this.rejects.inc({ code });
  }
}

export const metricsApi = (metrics: CoreMetrics) =>
  new Elysia({ name: "metrics" }).get(
    "/metrics",
    async () => new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } }),
    {
      detail: {
        tags: ["Metrics"],
        summary: "Prometheus metrics",
        description:
          "Core's metrics in the Prometheus text exposition format (0.0.4): events received, committed (also by event type), rejected (by error code) and duplicated, pending events, " +
          "batch sizes and receive-to-commit lag (histograms), event connections, WebSocket clients and cut-offs, nodes by status, and the process's " +
          "CPU and memory. Scrapes from loopback are never rate-limited; with API tokens configured, send a token with the read role " +
          "(Prometheus: `authorization: {credentials: <token>}`).",
        responses: {
          200: {
            description: "The metrics.",
            content: {
              "text/plain; version=0.0.4": {
                schema: { type: "string" },
                example:
                  "# HELP honeybee_events_committed_total Events committed to the database since Core started.\n# TYPE honeybee_events_committed_total counter\nhoneybee_events_committed_total 61204\n",
              },
            },
          },
        },
      },
    },
  );
