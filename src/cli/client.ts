/**
 * A small client of Core's REST API for the CLI. Responses are parsed with exact u64 node ids
 * (they exceed 2^53), and every failure becomes a CliError whose one line says what to do.
 */
import type { NodeDetail, NodeSummary } from "../modules/nodes";
import type { Honeypot } from "../modules/pots";
import { parseWithIds, stringify, toU64 } from "../protocol/json";
import { CliError, Unreachable, usageError } from "./errors";

export const DEFAULT_API = "http://127.0.0.1:9002";
export const DEFAULT_WS = "ws://127.0.0.1:9003";

/** An error answer from Core: `{"error": {"code", "message"}}` with its HTTP status. */
export class ApiError extends CliError {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Checks a base address given by flag or environment; a bad one is a usage error. */
export function baseUrl(value: string, protocols: string[], flag: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${flag} must be a URL such as ${protocols[0]}//127.0.0.1:${protocols[0]!.startsWith("ws") ? 9003 : 9002}, got ${JSON.stringify(value)}`);
  }
  if (!protocols.includes(url.protocol)) throw usageError(`${flag} must start with ${protocols.map((p) => p + "//").join(" or ")}, got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, "");
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "unknown host",
  ECONNRESET: "connection reset",
  TimeoutError: "no answer in time",
};

export const START_HINT = 'start it with "honeybee up" (or "honeybee core")';
export const TOKEN_HINT = "set HONEYBEE_TOKEN to an API token (an operator's for commands)";

/** The REST shapes, typed by the same schemas that validate and document them. */
export type Node = NodeSummary;
export type Pot = Honeypot;
export type { NodeDetail };

export class ApiClient {
  constructor(
    readonly base: string,
    /** HONEYBEE_TOKEN, sent as a bearer token (Core checks it when API tokens are configured). */
    private readonly token?: string,
    private readonly timeoutMs = 15_000,
  ) {}

  get<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    return this.request<T>("GET", q.size ? `${path}?${q}` : path);
  }

  /** A document that is not JSON (a session's recording), as text; errors are JSON as usual. */
  getText(path: string): Promise<string> {
    return this.request<string>("GET", path, undefined, true);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PUT", path, body);
  }

  private async request<T>(method: string, path: string, body?: unknown, asText = false): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const err = e as { code?: string; name?: string; message?: string };
      const reason = NETWORK_REASONS[err.code ?? err.name ?? ""] ?? err.message ?? String(e);
      throw new Unreachable(`cannot reach Core at ${this.base} (${reason}); ${START_HINT}, or point --api / HONEYBEE_API at it`);
    }
    const text = await res.text();
    if (asText && res.ok) return text as T;
    let parsed: unknown;
    try {
      parsed = parseWithIds(text);
    } catch {
      throw new CliError(`${this.base} answered ${method} ${path} with HTTP ${res.status} and no JSON: is it HoneyBee Core's REST API? check --api / HONEYBEE_API`);
    }
    if (!res.ok) {
      const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
      const code = typeof error?.code === "string" ? error.code : `http_${res.status}`;
      const message = typeof error?.message === "string" ? error.message : `HTTP ${res.status} from ${method} ${path}`;
      throw new ApiError(res.status, code, res.status === 401 ? `${message}; ${TOKEN_HINT}` : message);
    }
    return parsed as T;
  }

  listNodes(): Promise<{ nodes: Node[] }> {
    return this.get("/api/v1/nodes");
  }

  node(id: bigint): Promise<NodeDetail> {
    return this.get(`/api/v1/nodes/${id}`);
  }

  listPots(): Promise<{ honeypots: Pot[] }> {
    return this.get("/api/v1/honeypots");
  }

  sendCommand(nodeId: bigint, command: unknown): Promise<{ command_id: string }> {
    return this.post(`/api/v1/nodes/${nodeId}/commands`, command);
  }

  /**
   * Finds a node by id or by name. Names are what an operator remembers (ids are 20 random
   * digits); when several nodes share a name, the connected one wins, else the id is needed.
   */
  async resolveNode(ref: string): Promise<Node> {
    const { nodes } = await this.listNodes();
    const id = toU64(ref);
    const byId = id === null ? undefined : nodes.find((n) => n.node_id === id);
    if (byId) return byId;
    let named = nodes.filter((n) => n.node_name === ref);
    if (named.length > 1) {
      const live = named.filter((n) => n.status !== "Unknown" && n.status !== "Stopped");
      if (live.length === 1) named = live;
    }
    if (named.length === 1) return named[0]!;
    if (named.length > 1) {
      throw new CliError(`${named.length} nodes are named ${JSON.stringify(ref)} (ids ${named.map((n) => n.node_id).join(", ")}); give the node id instead`);
    }
    const what = id === null ? `no node is named ${JSON.stringify(ref)}` : `node ${ref} is not registered`;
    throw new CliError(`${what}; list the nodes with "honeybee nodes"`);
  }
}
