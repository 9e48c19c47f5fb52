/**
 * What keeps web pages from driving Core through the operator's browser (README, "Security").
 *
 * A page on another origin can send a loopback Core "simple" requests (form and text POSTs, no
 * preflight), open WebSockets to it (no CORS at all), and, through DNS rebinding, read it as
 * its own origin. So, before anything else on 9002 and 9003:
 * - Host must name Core: a loopback name, an address Core listens on, or `allowed_hosts` (421);
 * - a browser's `Origin` on a WebSocket upgrade or a state-changing request must be Core's own
 *   (same host and one of Core's ports) or in `allowed_origins` (403);
 * - a state-changing request's body is `application/json` (415), which a page can only send
 *   after a CORS preflight that Core never grants.
 * - a declared body over `max_message_bytes` is refused before any of it is read (413); a
 *   streamed one is measured as it is read (`readCapped`, src/core/http/app.ts).
 * Clients that are not browsers (CLI, curl, nodes, the standalone proxy) send no Origin and a
 * Host they dialled, so they pass. Each check is a header read and a set lookup.
 */
import { networkInterfaces, hostname } from "node:os";

/**
 * Bun's own limit on a request body, set far past any body Core takes. Past it Bun answers a
 * bare 413 before any handler runs, for a declared length too: Core's limit is enforced by
 * Core instead, with its error shape (a declared length by the guard, a streamed body as it is
 * read). Bun reads no more of a body than a handler asks for: a route that answers without
 * reading stops the upload (measured: a 64 MiB chunked upload to such a route stopped after
 * 0.4-2.7 MB), so nothing is buffered past Core's limit.
 */
export const BUN_BODY_CAP = 2 ** 40;

export interface Refusal {
  ok: false;
  status: 403 | 413 | 415 | 421;
  code: string;
  message: string;
}

export interface GuardConfig {
  host: string;
  /** The largest request body taken; 0 or absent: no check here. */
  max_message_bytes?: number;
  allowed_hosts: string[];
  allowed_origins: string[];
}

const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const WILDCARD = new Set(["0.0.0.0", "::", "[::]"]);
const JSON_TYPE = /^\s*application\/json\s*(;|$)/i;

/** `[::1]:9002` -> `[::1]`, `Example.org.:80` -> `example.org`: the name part of a Host value, lower case. */
export function hostName(authority: string): string {
  let name: string;
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    name = end < 0 ? authority : authority.slice(0, end + 1);
  } else {
    const colon = authority.indexOf(":");
    name = colon < 0 ? authority : authority.slice(0, colon);
  }
  name = name.toLowerCase();
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/** The names an IP address appears as in a Host header (IPv6 in brackets). */
const asHostName = (address: string) => (address.includes(":") && !address.startsWith("[") ? `[${address.toLowerCase()}]` : address.toLowerCase());

export class RequestGuard {
  private readonly names = new Set<string>();
  private readonly anyHost: boolean;
  private readonly origins: Set<string>;
  private readonly maxBody: number;
  /** Ports of Core's own listeners (REST and proxy): a page served from one of them is Core's own. */
  readonly ownPorts = new Set<number>();
  // Clients send the same Host on every request; one remembered answer saves the parse.
  private lastHost = "";
  private lastHostOk = false;

  constructor(config: GuardConfig) {
    this.names.add("localhost");
    this.names.add("[::1]");
    if (WILDCARD.has(config.host)) {
      for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) this.names.add(asHostName(a.address));
      this.names.add(hostname().toLowerCase());
    } else {
      this.names.add(asHostName(config.host));
    }
    this.maxBody = config.max_message_bytes ?? 0;
    this.anyHost = config.allowed_hosts.includes("*");
    for (const h of config.allowed_hosts) this.names.add(hostName(h));
    this.origins = new Set(config.allowed_origins.map((o) => o.toLowerCase().replace(/\/$/, "")));
  }

  /** A name (no port) that may appear in Host: loopback, one of Core's addresses, or allowed_hosts. */
  nameAllowed(name: string): boolean {
    return this.anyHost || this.names.has(name) || LOOPBACK_V4.test(name);
  }

  hostAllowed(host: string | null): boolean {
    // No Host at all is HTTP/1.0 from a tool, never a browser.
    if (host === null) return true;
    if (host === this.lastHost) return this.lastHostOk;
    const ok = this.nameAllowed(hostName(host));
    this.lastHost = host;
    this.lastHostOk = ok;
    return ok;
  }

  /** A browser's Origin: Core's own page (same host, one of Core's ports) or a configured one. */
  originAllowed(origin: string, host: string | null): boolean {
    const lower = origin.toLowerCase();
    if (this.origins.has(lower)) return true;
    const m = /^(https?):\/\/([^/?#@]+)$/.exec(lower);
    if (!m) return false; // "null" (sandboxed frames, file: pages) and anything odd
    const authority = m[2]!;
    if (host !== null && authority === host.toLowerCase()) return true;
    const name = hostName(authority);
    const portText = authority.slice(authority.lastIndexOf("]") + 1).split(":")[1];
    const port = portText ? Number(portText) : m[1] === "https" ? 443 : 80;
    return this.nameAllowed(name) && this.ownPorts.has(port);
  }

  /** The checks every request gets before authentication, routing or reading the body. */
  check(req: Request): Refusal | null {
    const headers = req.headers;
    const host = headers.get("host");
    if (!this.hostAllowed(host)) {
      return {
        ok: false,
        status: 421,
        code: "misdirected_request",
        message: `this Core does not answer to the host name ${JSON.stringify(hostName(host!))}; add it to allowed_hosts if it is one of Core's names`,
      };
    }
    const method = req.method;
    const changes = method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
    // A plain read (most requests) stops here: the Host check is what protects reads.
    if (!changes && headers.get("upgrade") === null) return null;
    const origin = headers.get("origin");
    if (origin !== null && !this.originAllowed(origin, host)) {
      return { ok: false, status: 403, code: "forbidden_origin", message: `requests from pages on ${origin} are not accepted; add it to allowed_origins if it is a console of yours` };
    }
    if (!changes) return null;
    const length = headers.get("content-length");
    // A request without a body carries nothing a form could forge beyond what Origin covers.
    const hasBody = (length !== null && length !== "0") || headers.get("transfer-encoding") !== null;
    if (length !== null && this.maxBody > 0 && Number(length) > this.maxBody) {
      return { ok: false, status: 413, code: "payload_too_large", message: `a body of ${length} bytes is over the limit of ${this.maxBody} bytes (max_message_bytes)` };
    }
    if (hasBody && !JSON_TYPE.test(headers.get("content-type") ?? "")) {
      return { ok: false, status: 415, code: "unsupported_media_type", message: `${method} takes a JSON body: send Content-Type: application/json` };
    }
    return null;
  }
}
