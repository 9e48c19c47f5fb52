/**
 * The live feed as the CLI reads it: a WebSocket to the proxy with filters in the query string,
 * read as Protocol v2 messages one at a time. Used to follow events and to watch a command's
 * honeypot reach its state without polling.
 */
import { parseWithIds } from "../protocol/json";
import { variant } from "../protocol/messages";
import { START_HINT, TOKEN_HINT } from "./client";
import { CliError, Unreachable } from "./errors";

export interface FeedFilter {
  kinds?: string[];
  node_id?: bigint;
  pot_id?: string;
  event_type?: string;
}

export interface FeedMessage {
  kind: string;
  payload: any;
}

export type FeedNext = FeedMessage | { closed: { code: number; reason: string } } | { timeout: true };

export function feedUrl(base: string, filter: FeedFilter): string {
  const q = new URLSearchParams();
  if (filter.kinds?.length) q.set("kinds", filter.kinds.join(","));
  if (filter.node_id !== undefined) q.set("node_id", filter.node_id.toString());
  if (filter.pot_id) q.set("pot_id", filter.pot_id);
  if (filter.event_type) q.set("event_type", filter.event_type);
  return `${base}/${q.size ? `?${q}` : ""}`;
}

/**
 * Why a WebSocket did not open. The browser API says nothing, so ask the same URL over plain
 * HTTP: the proxy answers a refused upgrade (bad filter, missing token) with its JSON error.
 */
async function explainRefusal(url: string, base: string, token?: string): Promise<CliError> {
  const unreachable = new Unreachable(`cannot reach Core's WebSocket proxy at ${base}; ${START_HINT}, or point --ws / HONEYBEE_WS at it`);
  try {
    const res = await fetch(url.replace(/^ws/, "http"), { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(5000) });
    const message = ((await res.json()) as { error?: { message?: string } }).error?.message;
    // 426 is the proxy refusing plain HTTP: it would have taken a WebSocket now, so the socket
    // failed on the way (a Core restarting between the two tries), which is worth retrying.
    if (!message || res.status === 426) return unreachable;
    return new CliError(res.status === 401 ? `${message}; ${TOKEN_HINT}` : `the WebSocket proxy at ${base} refused the connection: ${message}`);
  } catch {
    return unreachable;
  }
}

export class LiveFeed {
  private queue: FeedMessage[] = [];
  private waiter: ((m: FeedNext) => void) | null = null;
  private closedWith: { code: number; reason: string } | null = null;

  private constructor(private readonly ws: WebSocket) {
    ws.onmessage = (e) => {
      if (typeof e.data !== "string") return;
      let msg: FeedMessage | null = null;
      try {
        const v = variant((parseWithIds(e.data) as { message?: unknown }).message);
        if (v) msg = { kind: v.kind, payload: v.payload };
      } catch {
        // The proxy only sends JSON; a frame that is not is skipped rather than fatal to a tail.
      }
      if (!msg) return;
      if (this.waiter) this.take()(msg);
      else this.queue.push(msg);
    };
    ws.onclose = (e) => {
      this.closedWith = { code: e.code, reason: e.reason };
      this.waiter && this.take()({ closed: this.closedWith });
    };
  }

  private take(): (m: FeedNext) => void {
    const w = this.waiter!;
    this.waiter = null;
    return w;
  }

  /** Opens the feed; resolves once the proxy has subscribed the socket, so nothing later is missed. */
  static connect(base: string, filter: FeedFilter, token?: string): Promise<LiveFeed> {
    const url = feedUrl(base, filter);
    const ws = new WebSocket(url, token ? ({ headers: { authorization: `Bearer ${token}` } } as any) : undefined);
    return new Promise((resolve, reject) => {
      ws.onopen = () => resolve(new LiveFeed(ws));
      ws.onerror = () => void explainRefusal(url, base, token).then(reject);
    });
  }

  /** The next message, or why there is none: the socket closed, or `timeoutMs` passed. */
  next(timeoutMs?: number): Promise<FeedNext> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.closedWith) return Promise.resolve({ closed: this.closedWith });
    return new Promise((resolve) => {
      const timer = timeoutMs === undefined ? null : setTimeout(() => this.waiter === done && this.take()({ timeout: true }), Math.max(0, timeoutMs));
      const done = (m: FeedNext) => {
        if (timer) clearTimeout(timer);
        resolve(m);
      };
      this.waiter = done;
    });
  }

  close(): void {
    this.ws.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
