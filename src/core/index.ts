/**
 * Core: starts every listener from one config and returns a handle whose `stop()` shuts them
 * down in the order that loses nothing (stop accepting, drain the event pipeline, close the
 * database).
 */
import { defaultCoreConfig, type CoreConfig } from "../config";
import { isPostgresUrl } from "../db/pg";
import { openStores } from "../db/stores";
import { geoLookup } from "../geo";
import { EventQueries } from "../db/event-queries";
import { withGeo } from "./outputs/geo";
import { createLogger, type Logger } from "../log";
import { PortInUseError, bindOrExplain } from "../net/bind";
import type { CommandAck } from "../protocol/messages";
import { createApi } from "./api";
import { catalogueApi } from "./api/catalogue";
import { commandsApi } from "./api/commands";
import { eventList, eventsApi, pgEventList } from "./api/events";
import { nodesApi, registryLists } from "./api/nodes";
import { outputsApi } from "./api/outputs";
import { sessionsApi } from "./api/sessions";
import { RecordingReceiver } from "./recordings/receiver";
import { streamApi } from "./api/stream";
import { bodyCap, Security } from "./auth";
import { timelineApi } from "./api/timeline";
import { whoamiApi } from "./api/whoami";
import { consoleApi } from "./console";
import { MessageBus } from "./bus";
import { CommandRouter, type IssueResult } from "./commands/router";
import { createIngest, startEventSocket } from "./ingest";
import { CoreMetrics, metricsApi } from "./metrics";
import { indicatorsApi } from "./api/indicators";
import { startNodeChannel } from "./node-channel";
import { Outputs } from "./outputs";
import { FeedHub } from "./proxy/feed-hub";
import { startProxy, type ProxyHandle } from "./proxy/server";
import { isFeedKind } from "./proxy/topics";
import { Registry } from "./registry";
import { Rules } from "./rules";
import { tlsOptions } from "./tls";
import { artifactsApi } from "./artifacts/api";
import { Artifacts } from "./artifacts/service";
import { FileReceiver } from "./transfer/receiver";
import { dirname, join } from "node:path";
import { ConfigError } from "../config";
import { connectBus, type Bus } from "../cluster/connect";
import { startBridge, type BridgeHandle } from "../cluster/bridge";
import { ROLES, parseRoles, type Role } from "../cluster/names";

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
  readonly cluster: { bus: Bus; bridge: BridgeHandle; roles: Set<Role> } | null;
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
  // Operator MMDB files are opened now, so a wrong path stops start-up with its name.
  const geo = config.geo_enrichment ? geoLookup({ geoipDb: config.geoip_db, asnDb: config.asn_db }) : null;
  // SQLite keeps artifacts beside the database unless configured elsewhere (docs/artifacts.md);
  // PostgreSQL keeps their bytes itself, and this folder only the transfers under way.
  const artifactsDir = config.artifacts_dir || join(config.db === ":memory:" || isPostgresUrl(config.db) ? "./data" : dirname(config.db), "artifacts");
  const stores = await openStores(config.db, (err) => log.error({ err }, "a database write failed"), { artifactsDir });
  security.useNodeSecrets(stores.nodeSecrets);
  let clusterBus: Bus | null = null;
  if (config.bus) {
    try {
      clusterBus = await connectBus(config, log.child({ component: "bus" }));
    } catch (e) {
      await stores.close();
      throw e;
    }
  }
  if (clusterBus) {
    // Every event must fit in one message of the bus, or its batch could never be published:
    // a longer line is refused at the socket (too_large), as any line past the limit is.
    const { ENVELOPE_ROOM } = await import("../cluster/wire");
    const { maxPayload } = await import("../cluster/connect");
    const payload = maxPayload(clusterBus.nc);
    const fit = payload - ENVELOPE_ROOM;
    if (config.max_message_bytes > fit) {
      log.warn({ max_message_bytes: fit, configured: config.max_message_bytes, max_payload: payload }, "max_message_bytes lowered so that every event fits in one message of the bus (raise the NATS servers' max_payload for longer ones)");
      config.max_message_bytes = fit;
    }
  }
  const bus = new MessageBus();
  const registry = new Registry(stores.registry, bus, log.child({ component: "registry" }), config.heartbeat_timeout_ms, clusterBus !== null);
  const metrics = new CoreMetrics();
  // Several instances: the pipeline's batches go to JetStream; writer instances store them.
  const clusterWriter = clusterBus ? (await import("../cluster/ingest-channel")).ingestChannel({ bus: clusterBus, dictionaries: stores.ingestStart().dictionaries }) : undefined;
  const ingest = createIngest({ store: stores, config, bus, registry, writer: clusterWriter, logger: log.child({ component: "ingest" }), onBatchCommitted: (n, lag, byType) => metrics.committed(n, lag, byType), onReject: (code) => metrics.rejected(code) });
  const commandStore = stores.commands;
  const router = new CommandRouter(registry, commandStore, bus, log.child({ component: "commands" }));
  // The proxy runs in this process by default: the bus feeds the hub directly, no extra hop.
  const hub = new FeedHub();
  bus.subscribe(
    // A message that comes as its frame is sent as it is; its payload is never read (BusMessage.frame).
    (m) => isFeedKind(m.kind) && hub.publish(m.kind, m.frame === undefined ? m.payload : null, m.meta, m.frame),
    (kind) => hub.wants(kind),
  );

  const artifacts = new Artifacts({ dir: artifactsDir, maxBytes: config.artifact_max_bytes, retentionDays: config.retention_days, store: stores.artifacts, logger: log.child({ component: "artifacts" }) });
  const files = new FileReceiver(artifactsDir, { artifact: artifacts }, log.child({ component: "files" }));
  const stoppers: (() => unknown)[] = [() => artifacts.stop()];
  const cleanup = async () => {
    // Bounded: a database that cannot be written must not keep Core (and its listeners) up.
    const deadline = setTimeout(() => ingest.abandon(), config.shutdown_timeout_ms);
    try {
      for (const s of stoppers.reverse()) await s();
      registry.stop();
      await ingest.stop();
    } finally {
      clearTimeout(deadline);
      await clusterBus?.close();
      await stores.close();
    }
  };
  let cluster: CoreHandle["cluster"] = null;
  let writerRole: { problem(): string | null; stop(): Promise<void> } | null = null;
  // Outputs and rules read committed events from the store on their own positions; a commit
  // only wakes them. Stopped before ingest drains (stoppers run in reverse), their positions saved.
  // Outputs and rules see the same geo as REST and the feed (country/ASN rules, ECS source.geo).
  const eventSource = geo ? withGeo(stores.committed, (ip) => geo.known(ip) ?? null) : stores.committed;
  const outputs = new Outputs({ store: stores.outputs, source: eventSource, logger: log.child({ component: "outputs" }) });
  const rules = new Rules({ store: stores.outputs, source: eventSource, ingest, logger: log.child({ component: "rules" }) });
  stoppers.push(() => rules.stop(), () => outputs.stop());
  try {
    await artifacts.start();
    if (clusterBus) {
      const bridge = startBridge({ bus: clusterBus, messages: bus, registry, router, roles: [...roles], logger: log.child({ component: "cluster" }), counters: () => ingest.counters });
      stoppers.push(() => bridge.stop());
      cluster = { bus: clusterBus, bridge, roles };
      if (roles.has("writer")) {
        const { startWriterRole } = await import("../cluster/writer-role");
        // Events the writers drop as stored before count with those the sockets skip: nothing is dropped unseen.
        const w = await startWriterRole({ bus: clusterBus, pgUrl: config.db, config, logger: log.child({ component: "writer" }), onDuplicates: (n) => void (ingest.counters.duplicates += n) });
        writerRole = w;
        // Stopped after the listeners and the pipeline (stoppers run in reverse): what this
        // instance published is still stored by it when it is the only writer.
        stoppers.unshift(() => w.stop());
      }
    }
    const committed = (lastId: number) => {
      outputs.committed(lastId);
      rules.committed(lastId);
    };
    await outputs.start(config.outputs);
    await rules.start(config.rules);
    // After the start: a reload must not start an output of the database before those of the config file.
    if (clusterBus) {
      const { syncReaders } = await import("../cluster/reader-sync");
      const sync = syncReaders(clusterBus, { committed, reload: () => Promise.all([outputs.reload(), rules.reload()]).then(() => {}) }, log.child({ component: "outputs" }));
      outputs.onChange = rules.onChange = () => sync.changed();
      stoppers.push(() => sync.stop());
    }
    stoppers.push(ingest.onCommit(committed));
    const nodeChannel = !roles.has("ingest") ? null : bindOrExplain("node_port", config.host, config.node_port, () =>
      startNodeChannel({
        host: config.host,
        port: config.node_port,
        maxMessageBytes: config.max_message_bytes,
        maxNestingDepth: config.max_nesting_depth,
        registry,
        ingest,
        onCommandResult: (r) => router.onResult(r),
        recordings: new RecordingReceiver((node, pot, session, data, sha256) => stores.recordings.save(node, pot, session, data, sha256), config.max_unfinished_recording_bytes),
        files,
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
    // Stopped first on shutdown: stop accepting events, then drain what was received.
    if (events) stoppers.push(() => events.stop());

    const wsLimits = { maxPayloadLength: config.max_message_bytes, backpressureLimit: config.ws_backpressure_bytes };
    // The lists are served by their plugins and, for a plain GET, straight from Bun's router.
    // SQLite's queries serve a page as stored text, kept until the next commit; PostgreSQL's a page of rows.
    const eventsList =
      stores.events instanceof EventQueries ? eventList(stores.events, () => ingest.version, { ingest, geo, nodes: () => registry.listNodes() }) : pgEventList(stores.events, geo, () => registry.listNodes());
    const lists = { ...registryLists(registry), "/api/v1/events": eventsList };
    const outputsStats = { outputs: () => outputs.stats(), rules: () => rules.status() };
    const eventsPlugin = eventsApi({
      events: stores.events,
      addresses: stores.addresses,
      ingest,
      // Stats shows the deployment's counters; /metrics stays per process (a scraper sums instances).
      counters: () => (cluster ? cluster.bridge.presence.deploymentCounters(ingest.counters) : ingest.counters),
      security: () => security.stats(),
      geo,
      list: eventsList,
      outputs: outputsStats,
      nodes: () => registry.listNodes(),
    });
    const app = createApi({
      logger: log.child({ component: "api" }),
      security,
      health: () => healthProblem(ingest.problem(), writerRole?.problem() ?? null, clusterBus),
      dbPath: stores.describe,
      reads: lists,
      plugins: [nodesApi(registry, lists), eventsPlugin, sessionsApi({ sessions: stores.sessions, recordings: stores.recordings, geo, nodes: () => registry.listNodes() }), commandsApi(router, commandStore, security), catalogueApi(), streamApi(hub), artifactsApi(artifacts, security), outputsApi(outputs, rules), timelineApi(stores.timeline), whoamiApi(security), consoleApi(log.child({ component: "console" })), metricsApi(metrics), indicatorsApi({ indicators: stores.indicators, ingest, geo, registry })],
      websocket: wsLimits,
    });
    // Bun cuts a body past bodyCap while it streams in, before any handler or auth runs (the
    // default would buffer 128 MiB per request); Core's own limit is checked below that.
    const api = !roles.has("api") ? null : bindOrExplain("api_port", config.host, config.api_port, () =>
      app.listen({ hostname: config.host, port: config.api_port, tls: tlsOptions(config, false), maxRequestBodySize: bodyCap(config.max_message_bytes) }),
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
        commands: { issue: async (nodeId, command, { remote, principal }) => toCommandAck(await router.issue(nodeId, command, { source: "ws", remote, principal })) },
        maxMessageBytes: config.max_message_bytes,
        backpressureBytes: config.ws_backpressure_bytes,
        security,
        tls: tlsOptions(config, false),
        logger: log.child({ component: "proxy" }),
      }),
    );
    if (proxy) stoppers.push(() => proxy.stop());
    metrics.attach({ ingest: () => ingest.counters, websocket: () => proxy ?? NO_PROXY, nodeStatuses: () => registry.listNodes().map((n) => n.status), outputs: () => outputs.stats() });

    const ports = { node: nodeChannel?.port ?? 0, api: api?.server?.port ?? 0, ws: proxy?.port ?? 0, event: events?.port ?? 0 };
    const clusterInfo = cluster ? { cluster: config.cluster, instance: cluster.bus.instance, roles: [...roles] } : {};
    log.info({ host: config.host, ports, db: stores.describe, ...clusterInfo }, "core started");
    let stopped: Promise<void> | null = null;
    return {
      config,
      ports,
      registry,
      bus,
      hub,
      proxy: proxy ?? NO_PROXY,
      security,
      cluster,
      outputs,
      rules,
      stop: () => (stopped ??= cleanup().then(() => log.info("core stopped"))),
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
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
