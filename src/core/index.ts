/**
 * Core: builds one context from the config (storage, security, registry, the event pipeline,
 * the live feed), starts the features on it (src/modules/<feature>/), then the listeners, and
 * returns a handle whose `stop()` shuts them down in the order that loses nothing (stop
 * accepting, stop the features, drain the event pipeline, close the database).
 */
import { dirname, join } from "node:path";
import { ConfigError, defaultCoreConfig, type CoreConfig } from "../config";
import type { Bus } from "../cluster/connect";
import { ROLES, parseRoles } from "../cluster/names";
import type { ClusterPlug } from "../cluster/plug";
import { isPostgresUrl } from "../db/pg";
import { openStores } from "../db/stores";
import { createLogger, type Logger } from "../log";
import { artifactsFeature } from "../modules/artifacts";
import { catalogueFeature } from "../modules/catalogue";
import { commandsFeature, type CommandRouter, type IssueResult } from "../modules/commands";
import { consoleFeature } from "../modules/console";
import { eventsFeature } from "../modules/events";
import { openGeo } from "../modules/geo";
import { indicatorsFeature } from "../modules/indicators";
import { CoreMetrics, metricsFeature } from "../modules/metrics";
import { nodesFeature } from "../modules/nodes";
import { outputsFeature, type Outputs } from "../modules/outputs";
import { potsFeature } from "../modules/pots";
import { rulesFeature, type Rules } from "../modules/rules";
import { sessionsFeature } from "../modules/sessions";
import { statsFeature } from "../modules/stats";
import { PortInUseError, bindOrExplain } from "../net/bind";
import type { CommandAck } from "../protocol/messages";
import { BUN_BODY_CAP, Security } from "./auth";
import { whoamiFeature } from "./auth/whoami";
import { MessageBus } from "./bus";
import type { CoreContext, Feature } from "./context";
import { createApi } from "./http/app";
import { createIngest, startEventSocket } from "./ingest";
import { startNodeChannel } from "./node-channel";
import { FeedHub } from "./proxy/feed-hub";
import { startProxy, type ProxyHandle } from "./proxy/server";
import { isFeedKind } from "./proxy/topics";
import { Registry } from "./registry";
import { tlsOptions } from "./tls";
import { FileReceiver } from "./transfer/file-receiver";
import { RecordingReceiver, type SaveRecording } from "./transfer/recording-receiver";

export interface CoreHandle {
  readonly config: CoreConfig;
  /** The ports listened on; 0 for a listener this instance's roles do not start. */
  readonly ports: { node: number; api: number; ws: number; event: number };
  readonly registry: Registry;
  readonly bus: MessageBus;
  readonly hub: FeedHub;
  readonly security: Security;
  /** The in-process WebSocket proxy (clients, cut-off count). */
  readonly proxy: ProxyHandle;
  /** Several instances (docs/scale-out.md): the bus, the bridge and this instance's roles; null alone. */
  readonly cluster: ClusterPlug | null;
  /** Outputs and alert rules (docs/outputs.md). */
  readonly outputs: Outputs;
  readonly rules: Rules;
  stop(): Promise<void>;
}

export { PortInUseError, bindOrExplain };

export async function startCore(overrides: Partial<CoreConfig> = {}, logger?: Logger): Promise<CoreHandle> {
  const config = defaultCoreConfig(overrides);
  const log = logger ?? createLogger(config.log_level);
  const roles = parseRoles(config.roles);
  if (!config.bus && roles.size < ROLES.length) throw new ConfigError(`roles other than all four (${config.roles}) need the bus: an instance alone must do everything (docs/scale-out.md)`);
  if (config.bus && !isPostgresUrl(config.db)) throw new ConfigError("several instances (bus) store in PostgreSQL: set db to a postgres:// URL (docs/scale-out.md)");
  const security = new Security(config);
  const exposure = security.checkExposure();
  if (exposure) log.warn(exposure);
  const geo = openGeo(config);
  // SQLite keeps artifacts beside the database unless configured elsewhere (docs/artifacts.md);
  // PostgreSQL keeps their bytes itself, and this folder only the transfers under way.
  const artifactsDir = config.artifacts_dir || join(config.db === ":memory:" || isPostgresUrl(config.db) ? "./data" : dirname(config.db), "artifacts");
  const stores = await openStores(config.db, (err) => log.error({ err }, "a database write failed"), { artifactsDir });
  security.useNodeSecrets(stores.nodeSecrets);
  let clusterBus: Bus | null = null;
  if (config.bus) {
    try {
      clusterBus = await (await import("../cluster/plug")).joinBus(config, log);
    } catch (e) {
      await stores.close();
      throw e;
    }
  }
  const bus = new MessageBus();
  const registry = new Registry(stores.registry, bus, log.child({ component: "registry" }), config.heartbeat_timeout_ms, clusterBus !== null);
  const metrics = new CoreMetrics();
  // Several instances: the pipeline's batches go to JetStream; writer instances store them.
  const clusterWriter = clusterBus ? (await import("../cluster/ingest-channel")).ingestChannel({ bus: clusterBus, dictionaries: stores.ingestStart().dictionaries }) : undefined;
  const ingest = createIngest({ store: stores, config, bus, registry, writer: clusterWriter, logger: log.child({ component: "ingest" }), onBatchCommitted: (n, lag, byType) => metrics.committed(n, lag, byType), onReject: (code) => metrics.rejected(code) });
  // The proxy runs in this process by default: the bus feeds the hub directly, no extra hop.
  const hub = new FeedHub();
  bus.subscribe(
    // A message that comes as its frame is sent as it is; its payload is never read (BusMessage.frame).
    (m) => isFeedKind(m.kind) && hub.publish(m.kind, m.frame === undefined ? m.payload : null, m.meta, m.frame),
    (kind) => hub.wants(kind),
  );
  let cluster: ClusterPlug | null = null;
  const ctx: CoreContext = {
    config,
    log,
    stores,
    security,
    geo,
    bus,
    registry,
    ingest,
    hub,
    // Stats shows the deployment's counters; /metrics stays per process (a scraper sums instances).
    counters: () => (cluster ? cluster.bridge.presence.deploymentCounters(ingest.counters) : ingest.counters),
    artifactsDir,
  };

  // The features, in the order they start (and the reverse of the order they stop).
  const commands = commandsFeature(ctx);
  const artifacts = artifactsFeature(ctx);
  const sessions = sessionsFeature(ctx);
  const outputs = outputsFeature(ctx);
  const rules = rulesFeature(ctx, { hasOutput: (name) => outputs.outputs.has(name) });
  const features: Feature[] = [
    nodesFeature(ctx),
    potsFeature(ctx),
    commands,
    catalogueFeature(),
    eventsFeature(ctx),
    statsFeature(ctx, { outputs: () => outputs.outputs.stats(), rules: () => rules.rules.status() }),
    sessions,
    artifacts,
    outputs,
    rules,
    indicatorsFeature(ctx),
    consoleFeature(ctx),
    metricsFeature(metrics),
    whoamiFeature(ctx),
  ];

  const stoppers: (() => unknown)[] = [];
  const cleanup = async () => {
    // Bounded: a database that cannot be written must not keep Core (and its listeners) up.
    const deadline = setTimeout(() => ingest.abandon(), config.shutdown_timeout_ms);
    try {
      for (const s of stoppers.reverse()) await s();
      registry.stop();
      await ingest.stop();
      await cluster?.stopWriter();
    } finally {
      clearTimeout(deadline);
      await clusterBus?.close();
      await stores.close();
    }
  };
  try {
    if (clusterBus) {
      cluster = await (await import("../cluster/plug")).plugCluster({ bus: clusterBus, roles, config, messages: bus, registry, router: commands.router, ingest, log });
      const plug = cluster;
      stoppers.push(() => plug.stop());
    }
    // Features stop before the pipeline drains (stoppers run in reverse); outputs and rules save their positions.
    for (const f of features) {
      await f.start?.();
      if (f.stop) stoppers.push(() => f.stop?.());
    }
    // Outputs and rules read committed events from the store on their own positions; a commit only wakes them.
    const readers = [outputs.outputs, rules.rules];
    const committed = (lastId: number) => {
      for (const r of readers) r.committed(lastId);
    };
    cluster?.shareReaders({
      committed,
      reload: () => Promise.all(readers.map((r) => r.reload())).then(() => {}),
      setOnChange: (changed) => {
        for (const r of readers) r.onChange = changed;
      },
    });
    stoppers.push(ingest.onCommit(committed));
    const ports = startListeners(ctx, features, { roles, commands: commands.router, files: new FileReceiver(artifactsDir, { artifact: artifacts.artifacts }, log.child({ component: "files" })), saveRecording: sessions.saveRecording, cluster, clusterBus, stoppers });
    metrics.attach({ ingest: () => ingest.counters, websocket: () => ports.proxy, nodeStatuses: () => registry.listNodes().map((n) => n.status), outputs: () => outputs.outputs.stats() });
    const clusterInfo = cluster ? { cluster: config.cluster, instance: cluster.bus.instance, roles: [...roles] } : {};
    log.info({ host: config.host, ports: ports.ports, db: stores.describe, ...clusterInfo }, "core started");
    let stopped: Promise<void> | null = null;
    return {
      config,
      ports: ports.ports,
      registry,
      bus,
      hub,
      proxy: ports.proxy,
      security,
      cluster,
      outputs: outputs.outputs,
      rules: rules.rules,
      stop: () => (stopped ??= cleanup().then(() => log.info("core stopped"))),
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/**
 * The four listeners this instance's roles start: the node channel (9001), the event socket
 * (9100), REST with the features' routes (9002) and the WebSocket proxy (9003). Each is stopped
 * first on shutdown (stoppers run in reverse): stop accepting, then drain what was received.
 */
function startListeners(
  ctx: CoreContext,
  features: Feature[],
  o: {
    roles: Set<string>;
    commands: CommandRouter;
    files: FileReceiver;
    saveRecording: SaveRecording;
    cluster: ClusterPlug | null;
    clusterBus: Bus | null;
    stoppers: (() => unknown)[];
  },
): { ports: CoreHandle["ports"]; proxy: ProxyHandle } {
  const { config, log, registry, ingest, security, hub } = ctx;
  const { roles, commands, stoppers } = o;
  const nodeChannel = !roles.has("ingest") ? null : bindOrExplain("node_port", config.host, config.node_port, () =>
    startNodeChannel({
      host: config.host,
      port: config.node_port,
      maxMessageBytes: config.max_message_bytes,
      maxNestingDepth: config.max_nesting_depth,
      registry,
      ingest,
      onCommandResult: (r) => commands.onResult(r),
      recordings: new RecordingReceiver(o.saveRecording, config.max_unfinished_recording_bytes),
      files: o.files,
      connections: security.connections.node,
      nodeAuth: security.nodeAuth,
      idle: { firstMessageMs: config.first_message_timeout_ms, idleMs: config.idle_timeout_ms },
      tls: tlsOptions(config, true),
      logger: log.child({ component: "node-channel" }),
    }),
  );
  if (nodeChannel) stoppers.push(() => nodeChannel.stop());

  const events = !roles.has("ingest") ? null : bindOrExplain("event_port", config.host, config.event_port, () =>
    startEventSocket({
      host: config.host,
      port: config.event_port,
      ingest,
      config,
      security: { nodeAuth: security.nodeAuth, connections: security.connections.events, loopbackUnauthenticated: config.events_loopback_unauthenticated },
      isNodeAt: (nodeId, address) => registry.link(nodeId)?.remoteAddress === address,
      tls: tlsOptions(config, true),
      logger: log.child({ component: "event-socket" }),
    }),
  );
  if (events) stoppers.push(() => events.stop());

  const app = createApi({
    logger: log.child({ component: "api" }),
    security,
    health: () => healthProblem(ingest.problem(), o.cluster?.writerProblem() ?? null, o.clusterBus),
    dbPath: ctx.stores.describe,
    // The lists are served by their features' routes and, for a plain GET, straight from Bun's router.
    reads: Object.assign({}, ...features.map((f) => f.reads ?? {})),
    plugins: features.flatMap((f) => (f.routes ? [f.routes] : [])),
    websocket: { maxPayloadLength: config.max_message_bytes, backpressureLimit: config.ws_backpressure_bytes },
  });
  // Core's own limit is checked by Core, with its error shape (BUN_BODY_CAP, auth/browser.ts).
  const api = !roles.has("api") ? null : bindOrExplain("api_port", config.host, config.api_port, () =>
    app.listen({ hostname: config.host, port: config.api_port, tls: tlsOptions(config, false), maxRequestBodySize: BUN_BODY_CAP }),
  );
  if (api) {
    security.guard.ownPorts.add(api.server!.port!);
    stoppers.push(() => api.stop(true));
    stoppers.push(hub.attach(api.server!));
  }

  const proxy = !roles.has("proxy") ? null : bindOrExplain("ws_port", config.host, config.ws_port, () =>
    startProxy({
      host: config.host,
      port: config.ws_port,
      hub,
      commands: { issue: async (nodeId, command, { remote, principal }) => toCommandAck(await commands.issue(nodeId, command, { source: "ws", remote, principal })) },
      maxMessageBytes: config.max_message_bytes,
      backpressureBytes: config.ws_backpressure_bytes,
      security,
      tls: tlsOptions(config, false),
      logger: log.child({ component: "proxy" }),
    }),
  );
  if (proxy) stoppers.push(() => proxy.stop());
  return { ports: { node: nodeChannel?.port ?? 0, api: api?.server?.port ?? 0, ws: proxy?.port ?? 0, event: events?.port ?? 0 }, proxy: proxy ?? NO_PROXY };
}

/** What the handle shows for the proxy of an instance without the proxy role. */
const NO_PROXY: ProxyHandle = { port: 0, clients: 0, cutOff: 0, stop: () => {} };

/** Why this instance cannot take events now: the pipeline, the writer role, the bus. */
function healthProblem(ingest: string | null, writer: string | null, bus: Bus | null): string | null {
  const lostBus = bus && (bus.nc.isClosed() || bus.nc.isDraining()) ? "the bus connection is closed" : null;
  const all = [ingest, writer, lostBus].filter((p) => p !== null);
  return all.length ? all.join("; ") : null;
}

function toCommandAck(r: IssueResult): CommandAck {
  return r.ok
    ? { command_id: r.command_id, node_id: r.node_id, accepted: true, message: r.message }
    : { command_id: null, node_id: r.node_id, accepted: false, message: `${r.code}: ${r.message}` };
}
