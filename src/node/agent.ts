/**
 * The node agent: wires identity, pot store, supervisor, event relay, spool, forwarder and the
 * control link together, restores the pots that were running, and stops everything in the
 * order that loses nothing: honeypots first (they may send last events), then NodeDrop, then
 * the relay and forwarder, then the spool.
 */
import { existsSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "../config";
import { bindOrExplain } from "../net/bind";
import { PACKAGE_ROOT } from "../catalogue/paths";
import { createLogger, type Logger, type LogLevel } from "../log";
import { corePeers, defaultNodeConfig, gitAllowList, potDirs, type NodeConfig } from "./config";
import { NodeCredentials } from "./credentials";
import { clientTls } from "./tls";
import { defaultCatalogueDigest, looksLikeGit } from "./catalogue-fetch";
import { startControlLink } from "./control-link";
import { FileShipper } from "./file-shipper";
import { OUTBOX } from "../honeypots/shared/outbox";
import { startForwarder, type ForwarderHandle } from "./forwarder";
import { loadOrCreateNodeId, lockDataDir } from "./identity";
import { reapOrphan } from "./orphans";
import { createPotCommands } from "./pot-commands";
import { PotStore } from "./pot-store";
import { pickBaseEnv, potDir, type NodeContext } from "./pot-runtime";
import { RecordingShipper } from "./recordings";
import { healthReader } from "./health";
import { startRelay, type RelayHandle } from "./relay";
import { Spool } from "./spool";
import { Supervisor } from "./supervisor";

export interface NodeHandle {
  readonly nodeId: bigint;
  readonly config: NodeConfig;
  readonly dataDir: string;
  readonly ports: { relay: number };
  readonly supervisor: Supervisor;
  readonly spool: Spool;
  readonly relay: RelayHandle;
  readonly forwarder: ForwarderHandle;
  /** Resolves once the pots that were running before the last stop have been started again. */
  readonly restored: Promise<void>;
  /** Resolves once Core has accepted this node's registration. */
  registered(): Promise<void>;
  stop(): Promise<void>;
}

export async function startNode(overrides: Partial<NodeConfig> = {}, logger?: Logger): Promise<NodeHandle> {
  const config = defaultNodeConfig(overrides);
  const log = logger ?? createLogger(config.log_level);
  // A typo in --catalogue would otherwise only show at the first InstallPot, maybe weeks later.
  if (config.catalogue && !looksLikeGit(config.catalogue) && !(existsSync(config.catalogue) && statSync(config.catalogue).isDirectory())) {
    throw new ConfigError(`invalid value for "catalogue": ${config.catalogue} is neither a directory nor a git URL`);
  }
  const dataDir = resolve(config.data);
  const lock = lockDataDir(dataDir);
  const cleanups: (() => unknown)[] = [() => lock.release()];
  const undo = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    const { nodeId, created } = loadOrCreateNodeId(dataDir);
    log.info({ node_id: nodeId.toString(), data: dataDir, new_identity: created }, "node starting");
    const store = new PotStore(dataDir);
    const cores = corePeers(config);
    const patience = { reconnectMinMs: config.reconnect_min_ms, reconnectMaxMs: config.reconnect_max_ms, maxMessageBytes: config.max_message_bytes, tls: clientTls(config) };
    const credentials = new NodeCredentials(dataDir, config.enrollment_token);
    let forwarder: ForwarderHandle | null = null;
    let unreportedDrops = 0;
    const spool = Spool.open({
      dir: join(dataDir, "spool"),
      maxBytes: config.spool_max_bytes,
      segmentBytes: config.spool_segment_bytes,
      logger: log.child({ component: "spool" }),
      onAppend: () => forwarder?.pump(),
      onDrop: (n) => {
        unreportedDrops += n;
        reportDrops();
      },
    });
    cleanups.push(() => spool.close());

    let link: ReturnType<typeof startControlLink> | null = null;
    // Honeypots the node relays for without having installed them: where their recordings lie.
    const relayedFor = potDirs(config);
    if (relayedFor.size > 0) log.info({ pot_dir: Object.fromEntries(relayedFor) }, "sending the recordings of pots this node relays for");
    const recordings = new RecordingShipper({
      nodeId,
      potDir: (potId) => (store.get(potId)?.phase === "installed" ? join(dataDir, "pots", potId) : (relayedFor.get(potId) ?? null)),
      queueFile: join(dataDir, "recordings-queue.json"),
      send: (kind, payload) => link?.send(kind, payload) ?? false,
      logger: log.child({ component: "recordings" }),
    });
    cleanups.push(() => recordings.stop());

    const relay = bindOrExplain("relay_port", config.relay_host, config.relay_port, () =>
      startRelay({
        host: config.relay_host,
        port: config.relay_port,
        nodeId,
        maxMessageBytes: config.max_message_bytes,
        spool,
        potType: (id) => {
          const r = store.get(id);
          return r?.phase === "installed" ? r.pot_type : null;
        },
        onlyPot: () => {
          const pots = store.list();
          return pots.length === 1 ? pots[0]!.pot_id : null;
        },
        onEvent: (potId, event) => recordings.onEvent(potId, event),
        logger: log.child({ component: "relay" }),
      }),
    );
    cleanups.push(() => relay.stop());

    forwarder = startForwarder({
      addresses: cores.map((c) => c.events),
      ...patience,
      nodeId,
      spool,
      window: config.forward_window,
      helloAuth: () => credentials.hello(),
      helloRefused: () => credentials.refused("events"),
      readyIn: () => credentials.readyIn("events"),
      // Events go to the Core instance the node is registered with (which knows the node and
      // checks its TOTP), never to another that merely answers on its event socket; between a
      // lost instance and the next registration they wait in the spool. Before the first
      // registration, and with one Core, the forwarder finds its own way as it always did.
      follow: () => (cores.length === 1 || !link || link.lastPeer === null ? null : (link.peer ?? "wait")),
      logger: log.child({ component: "forwarder" }),
    });
    const fwd = forwarder;
    cleanups.push(() => fwd.stop());

    const ctx: NodeContext = {
      nodeId,
      eventHost: reachable(config.relay_host),
      eventPort: relay.port,
      potsDir: join(dataDir, "pots"),
      bun: process.execPath,
      home: PACKAGE_ROOT,
      baseEnv: pickBaseEnv(process.env),
    };
    const shipper = new FileShipper({
      outboxes: () => store.list().map((r) => ({ potId: r.pot_id, dir: join(potDir(ctx, r.pot_id), OUTBOX) })),
      send: (kind, payload) => link?.send(kind, payload) ?? false,
      scanMs: config.file_scan_ms,
      rateBytes: config.file_rate_bytes,
      logger: log.child({ component: "files" }),
    });
    cleanups.push(() => shipper.stop());
    const supervisor = new Supervisor({
      store,
      ctx,
      logsDir: join(dataDir, "logs"),
      startTimeoutMs: config.start_timeout_ms,
      stopGraceMs: config.stop_grace_ms,
      restartMinMs: config.restart_min_ms,
      restartMaxMs: config.restart_max_ms,
      logger: log.child({ component: "supervisor" }),
      onStatus: (potId, potType, status, message) => {
        log.info({ pot_id: potId, status, message }, "pot status");
        link?.send("PotStatusUpdate", { node_id: nodeId, pot_id: potId, pot_type: potType, status, message: message || null });
      },
    });
    cleanups.push(() => supervisor.stopAll());

    const shutdown = new AbortController();
    const commands = createPotCommands({
      nodeId,
      store,
      supervisor,
      ctx,
      logsDir: join(dataDir, "logs"),
      workDir: join(dataDir, "tmp"),
      catalogue: { catalogue: config.catalogue, catalogue_branch: config.catalogue_branch, git_allow: gitAllowList(config) },
      installTimeoutMs: config.install_timeout_ms,
      signal: shutdown.signal,
      logger: log.child({ component: "commands" }),
      send: (kind, payload) => link?.send(kind, payload) ?? false,
      relayed: (potId) => relay.relayed(potId),
      settings: {
        current: () => ({ log_level: log.level as LogLevel, heartbeat_ms: link?.heartbeatMs ?? config.heartbeat_ms, spool_max_bytes: spool.maxBytes }),
        apply: (change) => {
          if (change.spool_max_bytes !== undefined && change.spool_max_bytes < config.spool_segment_bytes) {
            return `spool_max_bytes ${change.spool_max_bytes} is below spool_segment_bytes ${config.spool_segment_bytes}; nothing changed`;
          }
          // Children follow the root logger's level unless they set their own, which none here does.
          if (change.log_level !== undefined) log.level = change.log_level;
          if (change.heartbeat_ms !== undefined && link) link.heartbeatMs = change.heartbeat_ms;
          if (change.spool_max_bytes !== undefined) spool.maxBytes = change.spool_max_bytes;
          return null;
        },
      },
    });

    // Installs cut off by a crash or kill: their folder is half-made; forget them, and tell Core.
    const interrupted = store.list().filter((r) => r.phase === "installing");
    for (const r of interrupted) {
      log.warn({ pot_id: r.pot_id }, "removing a pot whose install was interrupted by a node restart");
      rmSync(potDir(ctx, r.pot_id), { recursive: true, force: true });
      store.remove(r.pot_id);
    }
    rmSync(join(dataDir, "tmp"), { recursive: true, force: true });

    let announced = false;
    const reportDrops = () => {
      if (unreportedDrops === 0 || !link?.registered) return;
      const description = `event spool reached its limit of ${config.spool_max_bytes} bytes while Core was unreachable: dropped the ${unreportedDrops} oldest events (${spool.droppedTotal} in total)`;
      if (link.send("NodeEvent", { Alarm: { description } })) unreportedDrops = 0;
    };
    link = startControlLink({
      addresses: cores.map((c) => c.control),
      ...patience,
      nodeId,
      nodeName: config.name,
      nodeType: config.type,
      advertisedPort: relay.port,
      catalogue: () => defaultCatalogueDigest(config),
      heartbeatMs: config.heartbeat_ms,
      credentials,
      logger: log.child({ component: "control" }),
      status: () => "Running",
      health: healthReader(dataDir),
      onRegistered: (peer) => {
        fwd.follow(peer);
        if (!announced) link!.send("NodeEvent", "Started");
        announced = true;
        for (const r of interrupted) {
          link!.send("PotStatusUpdate", { node_id: nodeId, pot_id: r.pot_id, pot_type: r.pot_type, status: "Failed", message: "install was interrupted by a node restart; send InstallPot again" });
        }
        interrupted.length = 0;
        for (const r of store.list()) {
          const s = supervisor.status(r.pot_id);
          link!.send("PotStatusUpdate", { node_id: nodeId, pot_id: r.pot_id, pot_type: r.pot_type, status: s?.status ?? "Stopped", message: s?.message || null });
        }
        reportDrops();
        recordings.registered();
        shipper.kick();
      },
      onRecordingAck: (ack) => recordings.onAck(ack),
      onFileStatus: (status) => shipper.onStatus(status),
      onCommand: (cmd) => void commands.handle(cmd),
      onBadCommand: (bad) => commands.handleBad(bad),
    });
    const control = link;

    const restored = (async () => {
      await Promise.all(
        store.list().map(async (r) => {
          if (r.pid) await reapOrphan(r.pid, potDir(ctx, r.pot_id), config.stop_grace_ms, log);
          if (r.pid) store.update(r.pot_id, { pid: null });
          if (r.desired === "running") await supervisor.start(r.pot_id);
        }),
      );
    })();

    let stopping: Promise<void> | null = null;
    return {
      nodeId,
      config,
      dataDir,
      ports: { relay: relay.port },
      supervisor,
      spool,
      relay,
      forwarder: fwd,
      restored,
      registered: () => control.whenRegistered(),
      stop: () =>
        (stopping ??= (async () => {
          await restored.catch(() => {});
          shutdown.abort();
          await commands.settle();
          await shipper.stop();
          await supervisor.stopAll();
          await control.stop();
          relay.stop();
          await fwd.stop();
          spool.close();
          lock.release();
          log.info({ node_id: nodeId.toString() }, "node stopped");
        })()),
    };
  } catch (e) {
    await undo();
    throw e;
  }
}

/** The address pots use to reach a relay bound to `host` (a wildcard is reached on loopback). */
function reachable(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "::1";
  return host;
}
