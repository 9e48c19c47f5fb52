/**
 * The WebSocket proxy (port 9003): live feed out, commands in.
 *
 * Out: a client on `/` or `/ws` (optionally `?kinds=..&node_id=..&pot_id=..&event_type=..`)
 * receives every matching Protocol v2 message as a JSON text frame, through the FeedHub.
 * In: a NodeCommand, with or without the envelope, answered on the same socket with
 * CommandAck {command_id, node_id, accepted, message}. Anything else gets an `Error` message
 * and the socket stays open; a frame over the size limit closes the socket (1009).
 */
import type { Server, ServerWebSocket } from "bun";
import type { Logger } from "../../log";
import { parseWithIds, stringify, toU64 } from "../../protocol/json";
import { BUN_BODY_CAP, hasRole, presentedToken, type Principal, type Security } from "../auth";
import { RateLimitedLog } from "../../net/rate-limited-log";
import type { TlsOptions } from "../tls";
import { variant, type CommandAck } from "../../protocol/messages";
import type { FeedHub } from "./feed-hub";
import { parseFeedFilter } from "./topics";

/** How commands leave the proxy: the in-process router, or Core's REST API from a separate proxy. */
export interface CommandDoor {
  issue(nodeId: unknown, command: unknown, origin: { remote: string | null; principal: string | null; token: string | null }): Promise<CommandAck> | CommandAck;
}

export interface ProxyOptions {
  host: string;
  port: number;
  hub: FeedHub;
  commands: CommandDoor;
  maxMessageBytes: number;
  backpressureBytes: number;
  security: Security;
  tls?: TlsOptions;
  logger: Logger;
}

export interface ProxyHandle {
  readonly port: number;
  readonly clients: number;
  /** Clients closed because they did not read fast enough. */
  readonly cutOff: number;
  stop(): void;
}

interface ClientData {
  topics: string[];
  remote: string;
  query: URLSearchParams;
  principal: Principal;
  /** Passed on with commands when the proxy forwards them to Core's REST API. */
  token: string | null;
}

const frame = (kind: string, payload: unknown) => stringify({ version: 2, message: { [kind]: payload } });
export const errorFrame = (code: string, message: string) => frame("Error", { code, message });

/** Extracts {node_id, command} from a NodeCommand with or without its envelope. */
export function unwrapNodeCommand(value: unknown): { ok: true; node_id: unknown; command: unknown } | { ok: false; code: string; message: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, code: "bad_message", message: "a message must be a JSON object" };
  let body = value as Record<string, unknown>;
  if ("version" in body || "message" in body) {
    if (body.version !== 2) return { ok: false, code: "unsupported_version", message: `unsupported protocol version ${JSON.stringify(body.version ?? null)}; this proxy speaks version 2` };
    const v = variant(body.message);
    if (v?.kind !== "NodeCommand") return { ok: false, code: "unknown_kind", message: "the proxy accepts NodeCommand messages only" };
    body = v.payload as Record<string, unknown>;
  } else if ("NodeCommand" in body) {
    body = body.NodeCommand as Record<string, unknown>;
  }
  if (typeof body !== "object" || body === null || !("node_id" in body) || !("command" in body)) {
    return { ok: false, code: "bad_message", message: "a NodeCommand needs node_id and command" };
  }
  return { ok: true, node_id: body.node_id, command: body.command };
}

export function startProxy(opts: ProxyOptions): ProxyHandle {
  const { hub, logger, security } = opts;
  // A page retrying a refused socket in a loop must not become a flood of log lines.
  const refusals = new RateLimitedLog(logger);
  let clients = 0;
  let cutOff = 0;

  const onMessage = async (ws: ServerWebSocket<ClientData>, message: string | Buffer) => {
    if (typeof message !== "string") {
      ws.send(errorFrame("binary_not_supported", "send Protocol v2 messages as JSON text frames"));
      return;
    }
    let value: unknown;
    try {
      value = parseWithIds(message);
    } catch {
      ws.send(errorFrame("bad_json", `message is not valid JSON (${message.length} bytes)`));
      return;
    }
    const cmd = unwrapNodeCommand(value);
    if (!cmd.ok) {
      ws.send(errorFrame(cmd.code, cmd.message));
      return;
    }
    const refuse = (message: string) => ws.send(frame("CommandAck", { command_id: null, node_id: toU64(cmd.node_id), accepted: false, message }));
    const { principal } = ws.data;
    if (security.tokens.enabled && !hasRole(principal, "operator")) {
      security.counters.forbidden++;
      return refuse(`forbidden: token "${principal.name}" has role ${principal.role}; commands need operator`);
    }
    const wait = security.wsCommands.take(ws.data.remote);
    if (wait > 0) return refuse(`rate_limited: too many commands from ${ws.data.remote}; retry after ${wait} s`);
    const ack = await opts.commands.issue(cmd.node_id, cmd.command, { remote: ws.data.remote, principal: security.tokens.enabled ? principal.name : null, token: ws.data.token });
    ws.send(frame("CommandAck", ack));
  };

  const server: Server<ClientData> = Bun.serve<ClientData>({
    hostname: opts.host,
    port: opts.port,
    tls: opts.tls,
    // Nothing here takes a body: a declared one past the limit is refused by the guard, and an answer stops a streamed one (BUN_BODY_CAP).
    maxRequestBodySize: BUN_BODY_CAP,
    fetch(req, srv) {
      const remote = srv.requestIP(req)?.address ?? "unknown";
      const refused = security.guard.check(req);
      if (refused) {
        refusals.warn(`${remote}:${refused.code}`, { remote, code: refused.code, origin: req.headers.get("origin") }, "WebSocket upgrade refused");
        return Response.json({ error: { code: refused.code, message: refused.message } }, { status: refused.status });
      }
      const url = new URL(req.url);
      if (url.pathname !== "/" && url.pathname !== "/ws") {
        return Response.json({ error: { code: "not_found", message: "connect a WebSocket client to / or /ws" } }, { status: 404 });
      }
      const parsed = parseFeedFilter(url.searchParams);
      if (!parsed.ok) return Response.json({ error: { code: "bad_request", message: parsed.message } }, { status: 400 });
      // Only / and /ws get here, and this port speaks nothing but WebSocket.
      const auth = security.authorize(req, url.pathname, remote, { websocket: true });
      if (!auth.ok) {
        const headers: Record<string, string> = auth.retryAfter ? { "retry-after": String(auth.retryAfter) } : {};
        return Response.json({ error: { code: auth.code, message: auth.message } }, { status: auth.status, headers });
      }
      if (!security.connections.ws.acquire(remote)) {
        return Response.json({ error: { code: "too_many_connections", message: `too many connections from ${remote}` } }, { status: 429, headers: { "retry-after": "10" } });
      }
      const presented = presentedToken(req, url);
      // A browser that sent its token as a subprotocol must get one back, or it drops the socket.
      const headers = presented.via === "protocol" ? { "sec-websocket-protocol": "bearer" } : undefined;
      const data: ClientData = { topics: [], remote, query: url.searchParams, principal: auth.principal, token: presented.token };
      if (srv.upgrade(req, { data, headers })) return undefined;
      security.connections.ws.release(remote);
      return Response.json({ error: { code: "upgrade_required", message: "this port speaks WebSocket only" } }, { status: 426 });
    },
    websocket: {
      maxPayloadLength: opts.maxMessageBytes,
      // A client that stops reading is cut off rather than buffered without bound; it never
      // slows publishing to the others.
      backpressureLimit: opts.backpressureBytes,
      closeOnBackpressureLimit: true,
      idleTimeout: 120,
      sendPings: true,
      open(ws) {
        clients++;
        const parsed = parseFeedFilter(ws.data.query);
        if (parsed.ok) ws.data.topics = hub.join(ws, parsed.filter);
      },
      message(ws, message) {
        onMessage(ws, message).catch((e) => {
          logger.error({ err: e, remote: ws.data.remote }, "command handling failed");
          ws.send(errorFrame("internal", "internal error; see Core's log"));
        });
      },
      close(ws, code, reason) {
        clients--;
        security.connections.ws.release(ws.data.remote);
        hub.leave(ws.data.topics);
        if (code === 1006 || code === 1013 || code === 1009) {
          if (code !== 1009) cutOff++;
          logger.warn({ remote: ws.data.remote, code, reason }, "live-feed client closed");
        }
      },
    },
  });
  const detach = hub.attach(server);
  // A page served from this port is this server's own origin (see auth/browser.ts).
  security.guard.ownPorts.add(server.port!);

  return {
    get port() {
      return server.port!;
    },
    get clients() {
      return clients;
    },
    get cutOff() {
      return cutOff;
    },
    stop() {
      detach();
      server.stop(true);
    },
  };
}
