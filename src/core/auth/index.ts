/**
 * Core's security: one object built from config that every door asks. It establishes the
 * principal (REST, WebSocket upgrade), rate-limits per address, and counts what it refused
 * for GET /api/v1/stats.
 */
import type { CoreConfig } from "../../config";
import { ConfigError } from "../../config";
import { RequestGuard } from "./browser";
import { isConsolePath } from "../http/console-pages";
import { NodeAuth, type NodeSecretStore } from "./node-auth";
import { ConnectionCounter, RateLimiter } from "./rate-limit";
import { ANONYMOUS, TokenSet, hasRole, presentedToken, type Principal, type Role } from "./tokens";

export * from "./tokens";
export { NodeAuth } from "./node-auth";
export { BUN_BODY_CAP, RequestGuard, type Refusal } from "./browser";

export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; status: 401 | 403 | 429; code: string; message: string; retryAfter?: number };

// One object for every anonymous request: authorize runs for each of them.
const ALLOWED: AuthOutcome = Object.freeze({ ok: true, principal: ANONYMOUS });

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|\[::1\])$/i;

export const isLoopback = (host: string) => LOOPBACK.test(host);

/** A peer address on loopback, also as an IPv4-mapped IPv6 address (a dual-stack listener reports those). */
const isLoopbackPeer = (address: string) => LOOPBACK.test(address.startsWith("::ffff:") ? address.slice(7) : address);

export class Security {
  readonly tokens: TokenSet;
  readonly api: RateLimiter;
  readonly wsCommands: RateLimiter;
  readonly authFailures: RateLimiter;
  /** Host, Origin and media type: checked before authentication and routing (see browser.ts). */
  readonly guard: RequestGuard;
  readonly counters = { auth_failures: 0, forbidden: 0 };
  readonly connections: { node: ConnectionCounter; events: ConnectionCounter; ws: ConnectionCounter };
  /** Node authentication (TOTP); set once the database is open. */
  nodeAuth!: NodeAuth;
  /** The principal each REST request was authorised as, for handlers that record it. */
  readonly principals = new WeakMap<Request, Principal>();

  constructor(readonly config: CoreConfig) {
    this.tokens = TokenSet.fromConfig(config);
    this.guard = new RequestGuard(config);
    this.api = new RateLimiter(config.api_rate_per_minute);
    this.wsCommands = new RateLimiter(config.ws_commands_per_minute);
    this.authFailures = new RateLimiter(config.auth_failures_per_minute, config.auth_failures_per_minute);
    const max = config.max_connections_per_address;
    this.connections = { node: new ConnectionCounter(max), events: new ConnectionCounter(max), ws: new ConnectionCounter(max) };
    if ((config.tls_cert === "") !== (config.tls_key === "")) throw new ConfigError("tls_cert and tls_key go together: set both or neither");
  }

  get nodeAuthEnabled(): boolean {
    return this.config.node_enrollment_token !== "";
  }

  useNodeSecrets(store: NodeSecretStore): void {
    this.nodeAuth = new NodeAuth(this.config.node_enrollment_token, store, this.authFailures);
  }

  /**
   * Refuses a non-loopback bind without authentication unless --insecure: an open command
   * door runs software on every node, so exposing one must be a deliberate choice.
   * Returns a warning to log, if any.
   */
  checkExposure(): string | null {
    if (isLoopback(this.config.host)) return null;
    const missing = [!this.tokens.enabled && "API tokens (tokens or tokens_file)", !this.nodeAuthEnabled && "node enrollment (node_enrollment_token)"].filter(Boolean);
    if (missing.length === 0) return null;
    const message =
      `listening on ${this.config.host} (not loopback) without ${missing.join(" and ")} would let anyone command nodes and feed events. ` +
      "Create a token with `honeybee token create --name NAME --role operator` and put its entry in the config's tokens (or tokens_file), " +
      "set node_enrollment_token, and preferably tls_cert/tls_key; or pass --insecure to accept the risk.";
    if (!this.config.insecure) throw new ConfigError(message);
    return `INSECURE: ${message}`;
  }

  /**
   * Whether `authorize` can look at the client's address at all. Not when Core listens on
   * loopback only (every client is local), spares local clients the limit and needs no token:
   * then REST need not look the address up (a sixth of a health probe's cost).
   */
  get needsAddress(): boolean {
    return this.tokens.enabled || (this.api.enabled && (this.config.api_rate_limit_loopback || !isLoopback(this.config.host)));
  }

  /** Whether the per-address REST limit counts this request (docs/configuration.md, api_rate_per_minute). */
  private rateLimited(path: string, address: string): boolean {
    // /health is fixed bytes, cheaper to answer than a 429; a local client (health checker,
    // CLI, console on Core's host) is the operator's own unless api_rate_limit_loopback says not.
    // Prometheus scrapes on a fixed interval from the same host; they must never be told 429.
    if (path === "/metrics" && isLoopbackPeer(address)) return false;
    return this.api.enabled && path !== "/health" && (this.config.api_rate_limit_loopback || !isLoopbackPeer(address));
  }

  /**
   * Establishes who is asking over REST and whether they may (rate limit, token, role).
   * `servesConsole`: the REST port, whose console page and scripts need no token (the proxy's port serves none).
   * `websocket`: the path is a WebSocket route and the request asks to upgrade.
   */
  authorize(req: Request, path: string, address: string, { servesConsole = false, websocket = false } = {}): AuthOutcome {
    const wait = this.rateLimited(path, address) ? this.api.take(address) : 0;
    if (wait > 0) return { ok: false, status: 429, code: "rate_limited", message: `too many requests from ${address}; retry after ${wait} s`, retryAfter: wait };
    if (!this.tokens.enabled) return ALLOWED;
    const needed = servesConsole && isConsoleRequest(req, path) ? null : requiredRole(req.method, path);
    if (needed === null) return ALLOWED;
    return this.authenticate(req, new URL(req.url), address, needed, websocket);
  }

  authenticate(req: Request, url: URL, address: string, needed: Role, websocket: boolean): AuthOutcome {
    if (this.authFailures.blocked(address)) {
      return { ok: false, status: 429, code: "too_many_failures", message: `too many failed authentications from ${address}; retry later`, retryAfter: 60 };
    }
    // A token in the URL lands in proxies' and browsers' logs: only WebSocket upgrades, whose
    // browser API cannot set headers, may carry one there. The route decides that, not the
    // Upgrade header alone: any request can carry one.
    const { token } = presentedToken(req, url, websocket);
    if (!token) {
      const inQuery = !websocket && url.searchParams.has("token");
      const message = inQuery
        ? "a token in the query string (?token=) is accepted on WebSocket upgrades only; send Authorization: Bearer <token>"
        : "this Core requires an API token: send Authorization: Bearer <token>";
      return { ok: false, status: 401, code: "unauthorized", message };
    }
    const principal = this.tokens.authenticate(token);
    if (!principal) {
      this.counters.auth_failures++;
      this.authFailures.take(address);
      return { ok: false, status: 401, code: "unauthorized", message: "the API token is not valid" };
    }
    const refusal = this.forbidden(principal, needed);
    if (refusal) return { ok: false, status: 403, code: "forbidden", message: refusal };
    return { ok: true, principal };
  }

  /** Why a principal may not do what needs `needed` (counted), or null; anyone may while tokens are off. */
  forbidden(principal: Principal | undefined, needed: Role): string | null {
    if (!this.tokens.enabled || (principal && hasRole(principal, needed))) return null;
    this.counters.forbidden++;
    return principal ? `token "${principal.name}" has role ${principal.role}; this needs ${needed}` : `this needs a token with role ${needed}`;
  }

  stats() {
    return {
      auth_enabled: this.tokens.enabled,
      node_auth_enabled: this.nodeAuthEnabled,
      node_auth_failures: this.nodeAuth?.failures ?? 0,
      tls: this.config.tls_cert !== "",
      auth_failures: this.counters.auth_failures,
      forbidden: this.counters.forbidden,
      rate_limited: { api: this.api.limited, ws_commands: this.wsCommands.limited },
      connections_refused: { node: this.connections.node.refused, events: this.connections.events.refused, ws: this.connections.ws.refused },
    };
  }
}

/** A read of the console's page or scripts (docs/console.md): they hold no data; the API calls they make need a token. */
export function isConsoleRequest(req: Request, path: string): boolean {
  return (req.method === "GET" || req.method === "HEAD") && req.headers.get("upgrade") === null && isConsolePath(path);
}

/**
 * The role a REST request needs before routing: none for health and the docs, read for GET and
 * HEAD, operator otherwise. A route that needs more declares it (`{ role }`, ./roles.ts), since
 * only the router knows which route a path reaches.
 */
export function requiredRole(method: string, path: string): Role | null {
  if (path === "/health" || path === "/swagger" || path.startsWith("/swagger/")) return null;
  return method === "GET" || method === "HEAD" ? "read" : "operator";
}
