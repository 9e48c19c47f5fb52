/**
 * What the fake server answers to a request: the routing of a stock Debian install (the default
 * page, a PHP login portal at /index.php, robots.txt, the bait .env) with the status codes the
 * real server gives to everything else: 404 for what does not exist, 400 for a path that climbs
 * out of the document root, Apache's 403 for .ht* files and /server-status, 405 and 501 by
 * method as each server decides them.
 */
import { APACHE_DEFAULT_PAGE } from "./apache-page.ts";
import { header } from "./http-parse.ts";
import { envBait, loginPage, NGINX_WELCOME_PAGE, ROBOTS_TXT } from "./pages.ts";
import { type PageContext, PHP, type Persona, type Reply } from "./persona.ts";

export interface SiteOptions {
  persona: Persona;
  /** The server's own name, for pages when the client sent no usable Host. */
  hostname: string;
  /** Serve the bait .env (else 404). */
  envBait: boolean;
  /** Makes the bait's secrets stable per pot. */
  seed: string;
  title: string;
  /** When the site's files were "installed": their Last-Modified and ETag. */
  installedAt: Date;
}

export interface SiteRequest {
  method: string;
  target: string;
  headers: [string, string][];
  tls: boolean;
}

/** Methods Apache knows (its registered list); others get 501 Not Implemented. */
const APACHE_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "VERSION-CONTROL", "CHECKOUT", "UNCHECKOUT", "CHECKIN", "UPDATE", "LABEL", "REPORT", "MKWORKSPACE", "MKACTIVITY", "BASELINE-CONTROL", "MERGE", "INVALID"]);

/** Host and port as the client named them; the pot's own name when the Host header is absent or odd. */
export function clientHost(headers: [string, string][], tls: boolean, fallback: string): { host: string; port: number } {
  const defaultPort = tls ? 443 : 80;
  const m = /^([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$/.exec(header({ headers }, "host") ?? "");
  if (!m) return { host: fallback, port: defaultPort };
  const port = m[2] ? Number(m[2]) : defaultPort;
  return { host: m[1]!, port: port <= 65535 ? port : defaultPort };
}

/**
 * The path a server maps to a file: %XX decoded once, dot segments removed (RFC 3986 5.2.4).
 * null when ".." climbs above the root, which both servers answer with 400.
 */
export function normalizePath(rawPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    decoded = rawPath.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
  const out: string[] = [];
  for (const segment of decoded.split("/").slice(1)) {
    if (segment === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else if (segment !== ".") out.push(segment);
  }
  return `/${out.join("/")}`;
}

function staticHeaders(opts: SiteOptions, size: number): [string, string][] {
  const mtime = opts.installedAt;
  const lastModified: [string, string] = ["Last-Modified", mtime.toUTCString()];
  if (opts.persona.kind === "nginx") {
    return [lastModified, ["ETag", `"${Math.floor(mtime.getTime() / 1000).toString(16)}-${size.toString(16)}"`], ["Accept-Ranges", "bytes"]];
  }
  // Apache's default FileETag is "MTime Size": size and modification time in microseconds, in hex.
  return [lastModified, ["ETag", `"${size.toString(16)}-${(mtime.getTime() * 1000).toString(16)}"`], ["Accept-Ranges", "bytes"], ["Vary", "Accept-Encoding"]];
}

function staticReply(opts: SiteOptions, body: string, contentType: string | null): Reply {
  return { status: 200, headers: staticHeaders(opts, Buffer.byteLength(body, "latin1")), contentType, body };
}

/** What PHP adds to a page that starts a session, as PHP 8.2 with Debian's php.ini sends it. */
function phpReply(req: SiteRequest, opts: SiteOptions, body: string): Reply {
  const headers: [string, string][] = [["X-Powered-By", PHP]];
  if (!/(?:^|;\s*)PHPSESSID=/.test(header(req, "cookie") ?? "")) {
    const id = Array.from(crypto.getRandomValues(new Uint8Array(13)), (b) => "abcdefghijklmnopqrstuv0123456789"[b % 32]).join("");
    headers.push(["Set-Cookie", `PHPSESSID=${id}; path=/`]);
  }
  headers.push(["Expires", "Thu, 19 Nov 1981 08:52:00 GMT"], ["Cache-Control", "no-store, no-cache, must-revalidate"], ["Pragma", "no-cache"]);
  if (opts.persona.kind === "apache") headers.push(["Vary", "Accept-Encoding"]);
  return { status: 200, headers, contentType: "text/html; charset=UTF-8", body: Buffer.from(body, "utf8") };
}

export function route(req: SiteRequest, opts: SiteOptions): Reply {
  const { persona } = opts;
  const apache = persona.kind === "apache";
  const where = clientHost(req.headers, req.tls, opts.hostname);
  const ctx: PageContext = { method: req.method, ...where };
  const error = (status: number) => persona.errorReply(status, ctx);

  let target = req.target;
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  if (absolute) target = target.slice(absolute[0].length) || "/";
  if (target === "*" && req.method === "OPTIONS" && apache) return { status: 200, headers: [["Allow", "GET,POST,OPTIONS,HEAD"]], contentType: "text/html", body: "" };
  if (!target.startsWith("/")) return error(400);
  const rawPath = target.split("?")[0]!;
  // Apache's AllowEncodedSlashes Off answers 404 to any %2F in the path, before looking for a file.
  if (apache && /%2f/i.test(rawPath)) return error(404);
  const path = normalizePath(rawPath);
  if (path === null) return error(400);
  if (path.includes("\0")) return error(apache ? 404 : 400);

  if (!apache && !/^[A-Z_-]+$/.test(req.method)) return error(400);
  if (apache && !APACHE_METHODS.has(req.method)) return error(501);
  const read = req.method === "GET" || req.method === "HEAD";

  if (path === "/index.php") {
    if (!read && req.method !== "POST") return error(405);
    const message = req.method === "POST" ? "Invalid username or password." : null;
    return phpReply(req, opts, loginPage(opts.title, message));
  }
  if (apache && req.method === "OPTIONS") return { status: 200, headers: [["Allow", "GET,POST,OPTIONS,HEAD"]], contentType: "text/html", body: "" };
  if (apache && (/^\/\.ht/i.test(path) || /\/\.ht[^/]*$/i.test(path) || path === "/server-status" || path === "/server-info")) return error(403);

  let found: Reply | null = null;
  if (path === "/" || path === (apache ? "/index.html" : "/index.nginx-debian.html")) {
    found = staticReply(opts, apache ? APACHE_DEFAULT_PAGE : NGINX_WELCOME_PAGE, "text/html");
  } else if (path === "/robots.txt") {
    found = staticReply(opts, ROBOTS_TXT, "text/plain");
  } else if (path === "/.env" && opts.envBait) {
    // Apache has no type for ".env" and sends none; nginx sends its default_type.
    found = staticReply(opts, envBait(opts.seed, where.host), apache ? null : "application/octet-stream");
  }
  if (!found) return error(404);
  // Static files: Apache serves them to POST as to GET; nginx's static module refuses POST.
  if (read || (apache && req.method === "POST")) return found;
  return error(405);
}
