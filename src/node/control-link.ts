/**
 * The node's control channel to Core (TCP 9001, Protocol v2, one JSON per line both ways):
 * register, heartbeat, receive commands, say NodeDrop on the way out.
 *
 * While Core is away nothing is queued: statuses are re-reported in full after every
 * registration (`onRegistered`), which also covers a Core that restarted and forgot them.
 */
import { parseWithIds, stringify } from "../protocol/json";
import { decodeEnvelope, envelope, type FileStatus, type MessageKind, type NodeHealth, type NodeCommand, type Payload, type SessionRecordingAck } from "../protocol/messages";
import { formatAddress, startReconnecting, type LineConnection, type PeerOptions } from "./reconnect";

const FROM_CORE = new Set(["RegistrationAck", "NodeCommand", "SessionRecordingAck", "FileStatus", "Error"]);

export interface BadCommand {
  commandId: string | null;
  /** The pot the command names, when it names one in a usable form. */
  potId: string | null;
  honeypotType: string | null;
  message: string;
}

export interface ControlLinkOptions extends PeerOptions {
  nodeId: bigint;
  nodeName: string;
  nodeType: string;
  /** Port reported in NodeRegistration (the node's event relay). */
  advertisedPort: number;
  /** Fingerprint of the node's default catalogue for NodeRegistration, when it has one to give. */
  catalogue?(): string | undefined;
  heartbeatMs: number;
  /** Status sent with every heartbeat. */
  status(): string;
  /** The node's figures sent with every heartbeat (NodeStatusUpdate `health`), when it has them. */
  health?(): NodeHealth;
  /** Core accepted the registration; `peer` is its position in `addresses`. */
  onRegistered(peer: number): void;
  onCommand(command: NodeCommand): void;
  onBadCommand(bad: BadCommand): void;
  /** Core's answer to a session recording (src/node/recordings.ts). */
  onRecordingAck?(ack: SessionRecordingAck): void;
  /** Core's answers about files the node sends (docs/protocol.md#file-transfer). */
  onFileStatus?(status: FileStatus): void;
  /** Proof of identity for NodeRegistration, and Core's answer to it (src/node/credentials.ts). */
  credentials?: { registration(): Record<string, string>; accept(totpKey: string | undefined): void; refused(channel: "control"): void; readyIn(channel: "control"): number };
}

export interface ControlLink {
  readonly registered: boolean;
  /** Position in `addresses` of the Core this node is registered with; null while it is not. */
  readonly peer: number | null;
  /** The Core it registered with last (now or before); null before the first registration. */
  readonly lastPeer: number | null;
  /** Resolves once Core has accepted the registration (now, if it already has). */
  whenRegistered(): Promise<void>;
  /** Sends a message if registered; false (and nothing queued) otherwise. */
  send<K extends MessageKind>(kind: K, payload: Payload<K>): boolean;
  /** Heartbeat interval; a change (UpdateConfig) takes effect at once. */
  heartbeatMs: number;
  /** Sends NodeDrop (if registered), flushes and disconnects for good. */
  stop(): Promise<void>;
}

export function startControlLink(opts: ControlLinkOptions): ControlLink {
  const { logger } = opts;
  let registeredOn: LineConnection | null = null;
  /** The Core last registered with, to tell a fail-over from a reconnect to the same one. */
  let lastPeer: number | null = null;
  const named = (peer: number) => formatAddress(opts.addresses[peer]!);
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  const registeredWaiters: (() => void)[] = [];
  let heartbeatMs = opts.heartbeatMs;

  const write = (conn: LineConnection, kind: MessageKind, payload: unknown) => conn.write(stringify(envelope(kind, payload as never)) + "\n");
  const beat = (conn: LineConnection) => {
    const health = opts.health?.();
    write(conn, "NodeStatusUpdate", { node_id: opts.nodeId, status: opts.status(), ...(health ? { health } : {}) });
  };

  const stopHeartbeat = () => {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
  };

  const startHeartbeat = (conn: LineConnection) => {
    stopHeartbeat();
    heartbeat = setInterval(() => {
      if (registeredOn === conn) beat(conn);
    }, heartbeatMs);
  };

  const onLine = (text: string, conn: LineConnection) => {
    let value: unknown;
    try {
      value = parseWithIds(text);
    } catch {
      logger.warn({ bytes: text.length }, "Core sent a line that is not JSON; ignored");
      return;
    }
    const msg = decodeEnvelope(value, FROM_CORE);
    if (!msg.ok) {
      if (msg.kind === "NodeCommand") return opts.onBadCommand(describeBadCommand(value, msg.message));
      logger.warn({ code: msg.code }, `ignored a message from Core: ${msg.message}`);
      return;
    }
    switch (msg.kind) {
      case "RegistrationAck": {
        const ack = msg.payload;
        if (!ack.accepted) {
          // A refusal (wrong protocol version, id clash policy) will not fix itself quickly:
          // back off instead of hammering Core.
          logger.error({ message: ack.message }, "Core refused the registration; retrying later");
          opts.credentials?.refused("control");
          conn.end();
          return;
        }
        opts.credentials?.accept(ack.totp_key);
        registeredOn = conn;
        client.resetBackoff();
        if (lastPeer !== null && lastPeer !== conn.peer) {
          logger.warn({ from: named(lastPeer), to: named(conn.peer) }, `failed over from Core ${named(lastPeer)} to Core ${named(conn.peer)}`);
        }
        lastPeer = conn.peer;
        logger.info({ node_id: opts.nodeId.toString(), core: named(conn.peer) }, "registered with Core");
        beat(conn);
        startHeartbeat(conn);
        opts.onRegistered(conn.peer);
        for (const resolve of registeredWaiters.splice(0)) resolve();
        return;
      }
      case "NodeCommand": {
        if (registeredOn !== conn) return logger.warn("Core sent a command before accepting the registration; ignored");
        const cmd = msg.payload;
        if (cmd.node_id !== opts.nodeId) {
          return opts.onBadCommand({ commandId: cmd.command_id ?? null, potId: null, honeypotType: null, message: `command is for node ${cmd.node_id}, this is node ${opts.nodeId}` });
        }
        opts.onCommand(cmd);
        return;
      }
      case "SessionRecordingAck":
        opts.onRecordingAck?.(msg.payload);
        return;
      case "FileStatus":
        if (registeredOn === conn) opts.onFileStatus?.(msg.payload);
        return;
      case "Error":
        // Refused on connecting, before the registration was read: its code was not spent.
        if (msg.payload.code === "too_many_connections" && registeredOn !== conn) opts.credentials?.refused("control");
        logger.warn({ code: msg.payload.code }, `Core reported an error: ${msg.payload.message}`);
        return;
    }
  };

  const client = startReconnecting({
    ...opts,
    readyIn: () => opts.credentials?.readyIn("control") ?? 0,
    onOpen: (conn) => {
      logger.debug({ core: named(conn.peer) }, "connected to Core; registering");
      const catalogue = opts.catalogue?.();
      write(conn, "NodeRegistration", {
        node_id: opts.nodeId,
        node_name: opts.nodeName,
        address: conn.localAddress || undefined,
        port: opts.advertisedPort,
        node_type: opts.nodeType,
        ...(catalogue ? { catalogue } : {}),
        ...opts.credentials?.registration(),
      });
    },
    onLine,
    onClose: (conn) => {
      if (registeredOn !== conn) return;
      const others = opts.addresses.length > 1 ? "; trying the next Core" : "; reconnecting";
      logger.warn({ core: named(conn.peer) }, `lost the connection to Core ${named(conn.peer)}${others}`);
      registeredOn = null;
      stopHeartbeat();
    },
  });

  return {
    get registered() {
      return registeredOn !== null;
    },
    get peer() {
      return registeredOn?.peer ?? null;
    },
    get lastPeer() {
      return lastPeer;
    },
    whenRegistered() {
      if (registeredOn) return Promise.resolve();
      return new Promise<void>((resolve) => registeredWaiters.push(resolve));
    },
    send(kind, payload) {
      if (!registeredOn) return false;
      return write(registeredOn, kind, payload);
    },
    get heartbeatMs() {
      return heartbeatMs;
    },
    set heartbeatMs(ms: number) {
      heartbeatMs = ms;
      if (registeredOn) startHeartbeat(registeredOn);
    },
    async stop() {
      stopHeartbeat();
      if (registeredOn) write(registeredOn, "NodeDrop", null);
      registeredOn = null;
      await client.stop();
    },
  };
}

/** Pulls what can be used for a reply out of a NodeCommand that failed validation. */
function describeBadCommand(value: unknown, message: string): BadCommand {
  const cmd = (value as { message?: { NodeCommand?: Record<string, unknown> } }).message?.NodeCommand ?? {};
  const commandId = typeof cmd.command_id === "string" && cmd.command_id.length > 0 && cmd.command_id.length <= 128 ? cmd.command_id : null;
  const inner = cmd.command && typeof cmd.command === "object" ? (cmd.command as Record<string, unknown>) : {};
  const [name, arg] = Object.entries(inner)[0] ?? [];
  const install = name === "InstallPot" && arg && typeof arg === "object" ? (arg as Record<string, unknown>) : null;
  const rawPot = install ? install.pot_id : arg;
  const potId = typeof rawPot === "string" && rawPot.length > 0 && rawPot.length <= 128 ? rawPot : null;
  const honeypotType = install && typeof install.honeypot_type === "string" ? install.honeypot_type.slice(0, 128) : null;
  return { commandId, potId, honeypotType, message };
}
