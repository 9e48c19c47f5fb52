/**
 * The tcp kind: one bounded listener per configured port, all feeding the same handler, with
 * one connection cap over all of them (a scan of a thousand ports must not hold a thousand times
 * max_connections sockets). Events are tcp.session.connect, tcp.payload, tcp.session.closed.
 */
import type { Socket } from "node:net";
import type manifest from "../../../catalogue/tcp/manifest.json";
import { RateLimitedLog } from "../../net/rate-limited-log.ts";
import { parsePositiveInt } from "../shared/config.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { type Listener, listen } from "../shared/listener.ts";
import { PotSession } from "../shared/session.ts";
import { serveConnection } from "./connection.ts";
import { MAX_FIRST_BYTES, parseBanners, parseBounded, parsePorts } from "./ports.ts";

export async function startTcp({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const entries = parsePorts(config.ports);
  const banners = parseBanners(config.banners, entries);
  const firstBytes = parseBounded("first_bytes", config.first_bytes, 1, MAX_FIRST_BYTES);
  const waitMs = parseBounded("wait_ms", config.wait_ms, 0, 600_000);
  const maxConnections = parsePositiveInt("max_connections", config.max_connections);
  const idleMs = parsePositiveInt("idle_timeout", config.idle_timeout) * 1000;
  const totalMs = parsePositiveInt("session_timeout", config.session_timeout) * 1000;
  const warnings = new RateLimitedLog(logger, 1, 60_000);
  let open = 0;
  let refused = 0;

  const accept = (socket: Socket, banner: Buffer | null) => {
    if (open >= maxConnections) {
      refused++;
      warnings.warn("limit", { refused, max_connections: maxConnections }, "connection limit reached");
      socket.destroy();
      return;
    }
    open++;
    const session = PotSession.accepted(socket, "tcp", "tcp", sink);
    serveConnection(socket, session, { firstBytes, waitMs, banner }, () => open--);
  };

  const listeners: Listener[] = [];
  for (const entry of entries) {
    const banner = banners.get(entry.key) ?? banners.get("*") ?? null;
    try {
      listeners.push(await listen({ name: entry.name, host: config.listen_address, port: entry.port, maxConnections, idleMs, totalMs, logger }, (socket) => accept(socket, banner)));
    } catch (err) {
      await Promise.all(listeners.map((l) => l.close()));
      throw new Error(`cannot listen on ${config.listen_address} port ${entry.port}: ${(err as Error).message}`);
    }
  }
  return {
    ports: Object.fromEntries(entries.map((entry, i) => [entry.name, listeners[i]!.port])),
    stop: async () => {
      await Promise.all(listeners.map((l) => l.close()));
    },
  };
}
