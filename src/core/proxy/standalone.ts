/**
 * The proxy as its own process: fed from Core's backend stream (`/api/v1/stream`), sending
 * commands through Core's REST API, so live feeds can scale across processes and hosts.
 */
import type { Logger } from "../../log";
import { parseWithIds, stringify, toU64 } from "../../protocol/json";
import { variant, type CommandAck } from "../../protocol/messages";
import type { Security } from "../auth";
import { FeedHub } from "./feed-hub";
import { startProxy, type ProxyHandle } from "./server";
import { isFeedKind, metaOf } from "./topics";

export interface StandaloneProxyOptions {
  /** Core's REST base, e.g. ws://127.0.0.1:9002 or http://127.0.0.1:9002. */
  backend: string;
  host: string;
  port: number;
  maxMessageBytes: number;
  backpressureBytes: number;
  logger: Logger;
  /** Checks clients the way Core does (same tokens); commands are forwarded with the client's token. */
  security: Security;
  /** This proxy's own token for Core's backend stream, when Core requires one. */
  token?: string;
  /** Longest wait between reconnection attempts. */
  maxBackoffMs?: number;
}

export interface StandaloneProxyHandle extends ProxyHandle {
  /** Resolves once the backend stream is connected (again). */
  connected(): Promise<void>;
}

export function backendUrls(backend: string): { stream: string; rest: string } {
  const u = new URL(backend);
  const secure = u.protocol === "wss:" || u.protocol === "https:";
  const hostPort = u.host;
  return { stream: `${secure ? "wss" : "ws"}://${hostPort}/api/v1/stream`, rest: `${secure ? "https" : "http"}://${hostPort}` };
}

export function startStandaloneProxy(opts: StandaloneProxyOptions): StandaloneProxyHandle {
  const { logger } = opts;
  const urls = backendUrls(opts.backend);
  const hub = new FeedHub();
  let stopped = false;
  let socket: WebSocket | null = null;
  let backoff = 100;
  let ready = Promise.withResolvers<void>();
  let up = false;
  let retry: ReturnType<typeof setTimeout> | null = null;

  const connect = () => {
    if (stopped) return;
    const ws = new WebSocket(urls.stream, opts.token ? ({ headers: { authorization: `Bearer ${opts.token}` } } as any) : undefined);
    socket = ws;
    ws.onopen = () => {
      backoff = 100;
      up = true;
      logger.info({ backend: urls.stream }, "connected to Core's backend stream");
      ready.resolve();
    };
    ws.onmessage = (e) => {
      if (typeof e.data !== "string") return;
      let value: any;
      try {
        value = parseWithIds(e.data);
      } catch {
        return;
      }
      const v = variant(value?.message);
      if (v && isFeedKind(v.kind)) hub.publish(v.kind, v.payload, metaOf(v.payload), e.data);
    };
    ws.onclose = () => {
      socket = null;
      if (stopped) return;
      if (up) {
        up = false;
        ready = Promise.withResolvers<void>();
      }
      const wait = Math.min(backoff, opts.maxBackoffMs ?? 5000) * (0.5 + Math.random() / 2);
      backoff *= 2;
      logger.warn({ backend: urls.stream, retry_ms: Math.round(wait) }, "backend stream closed; reconnecting");
      retry = setTimeout(connect, wait);
    };
  };
  connect();

  const issue = async (nodeId: unknown, command: unknown, origin: { token: string | null }): Promise<CommandAck> => {
    const id = toU64(nodeId);
    if (id === null) return { command_id: null, node_id: null, accepted: false, message: "bad_request: node_id must be an unsigned 64-bit integer" };
    try {
      const res = await fetch(`${urls.rest}/api/v1/nodes/${id}/commands`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(origin.token ? { authorization: `Bearer ${origin.token}` } : {}) },
        body: stringify(command),
      });
      const body = (await res.json()) as { command_id?: string; error?: { code: string; message: string } };
      if (res.status === 202 && body.command_id) return { command_id: body.command_id, node_id: id, accepted: true, message: `command sent to node ${id}` };
      return { command_id: null, node_id: id, accepted: false, message: `${body.error?.code ?? res.status}: ${body.error?.message ?? res.statusText}` };
    } catch (e) {
      return { command_id: null, node_id: id, accepted: false, message: `core_unreachable: ${(e as Error).message}` };
    }
  };

  const proxy = startProxy({
    host: opts.host,
    port: opts.port,
    hub,
    commands: { issue },
    maxMessageBytes: opts.maxMessageBytes,
    backpressureBytes: opts.backpressureBytes,
    security: opts.security,
    logger,
  });

  return {
    get port() {
      return proxy.port;
    },
    get clients() {
      return proxy.clients;
    },
    get cutOff() {
      return proxy.cutOff;
    },
    connected: () => ready.promise,
    stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      socket?.close();
      proxy.stop();
    },
  };
}
