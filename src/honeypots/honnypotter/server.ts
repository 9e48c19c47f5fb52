/**
 * The honnypotter kind: a WordPress login that never lets anyone in. Every route answers as
 * WordPress 6.7 on PHP 8.2 behind nginx would, and every credential guess becomes an event with
 * HonnyPotter's field names.
 */
import type { Server } from "bun";
import type manifest from "../../../catalogue/honnypotter/manifest.json";
import { plainIp } from "../shared/address.ts";
import { parseByteCount, parsePort, parsePositiveInt } from "../shared/config.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { formFields, MAX_BODY, readBody } from "./body.ts";
import { attemptLogin } from "./login.ts";
import { loginPage, NGINX, nginxErrorPage, notFoundPage } from "./pages.ts";
import { handleXmlRpc } from "./xmlrpc.ts";
import { Outbox } from "../shared/outbox.ts";
import { captureUploads, isMultipart } from "./upload.ts";

const PHP_HEADERS = { Server: NGINX, "Content-Type": "text/html; charset=UTF-8", "X-Powered-By": "PHP/8.2.26" };
/** What wp-login.php adds: no caching, no framing, and the cookie it checks on the next POST. */
const LOGIN_HEADERS = {
  ...PHP_HEADERS,
  Expires: "Wed, 11 Jan 1984 05:00:00 GMT",
  "Cache-Control": "no-cache, must-revalidate, max-age=0, no-store, private",
  "Set-Cookie": "wordpress_test_cookie=WP%20Cookie%20check; path=/",
  "X-Frame-Options": "SAMEORIGIN",
  "Referrer-Policy": "strict-origin-when-cross-origin",
};
/** nginx closes idle keep-alive connections after 65 s; Bun's limit is 255. */
const IDLE_TIMEOUT_S = 65;
/** Bodies past this are refused by Bun itself; between MAX_BODY and this we answer like nginx. */
const HARD_BODY_LIMIT = 1024 * 1024;

function nginxError(status: number, reason: string): Response {
  return new Response(nginxErrorPage(status, reason), { status, headers: { Server: NGINX, "Content-Type": "text/html", Connection: "close" } });
}

/** The site's own URL: configured, or taken from a Host header that looks like a host name. */
function siteUrl(configured: string, req: Request): string {
  if (configured) return configured.replace(/\/+$/, "");
  const host = req.headers.get("host") ?? "";
  return `http://${/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/.test(host) ? host : "localhost"}`;
}

export async function startHonnypotter({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const users = new Set(config.wp_users.split(",").map((u) => u.trim()).filter(Boolean));
  const maxConnections = parsePositiveInt("max_connections", config.max_connections);
  const uploadMax = parsePositiveInt("upload_max_bytes", config.upload_max_bytes);
  const outbox = new Outbox(process.cwd(), parseByteCount("outbox_max_bytes", config.outbox_max_bytes));

  const handle = async (original: Request, server: Server<undefined>): Promise<Response> => {
    let req = original;
    // Bun.serve has no connection cap; in-flight requests are the closest bound, as nginx's 503.
    if (server.pendingRequests > maxConnections) return nginxError(503, "Service Temporarily Unavailable");
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      // Bun leaves req.url relative when the Host header is not a host; nginx refuses those.
      return nginxError(400, "Bad Request");
    }
    const site = siteUrl(config.site_url, req);
    const peer = server.requestIP(original);
    const request = {
      src_ip: plainIp(peer?.address),
      src_port: peer?.port ?? 0,
      dst_port: server.port ?? 0,
      user_agent: req.headers.get("user-agent") ?? "",
      request_uri: url.pathname + url.search,
      request_method: req.method,
    };
    const contentType = req.headers.get("content-type");
    if (req.method === "POST" && isMultipart(contentType)) {
      // A file upload, wherever it is sent: kept as an artifact, then the page answers as usual.
      const body = await readBody(req, uploadMax);
      if (!body) return nginxError(413, "Request Entity Too Large");
      await captureUploads(contentType as string, body, outbox, sink, request);
      req = new Request(req.url, { method: req.method, headers: req.headers, body: body.length <= MAX_BODY ? body : new Uint8Array(0) });
    }
    const page = (errors: string[], userLogin: string) =>
      new Response(loginPage({ siteUrl: site, siteName: config.site_name, errors, userLogin }), { headers: LOGIN_HEADERS });

    switch (url.pathname) {
      case "/":
        return page([], "");
      case "/wp-login.php":
      case "/standalone.php": {
        if (req.method !== "POST") return page([], "");
        const body = await readBody(req);
        if (!body) return nginxError(413, "Request Entity Too Large");
        const fields = await formFields(req.headers.get("content-type"), body);
        const outcome = attemptLogin(fields, /(^|;\s*)wordpress_test_cookie=/.test(req.headers.get("cookie") ?? ""), {
          users,
          lostPasswordUrl: `${site}/wp-login.php?action=lostpassword`,
        });
        if (outcome.attempted) {
          const { username, password } = outcome;
          sink.emit({ eventid: "honnypotter.login.failed", ...request, username, password, message: `Failed login attempt: ${username} from ${request.src_ip}` });
        }
        return page(outcome.errors, outcome.username);
      }
      case "/xmlrpc.php": {
        const body = req.method === "POST" ? await readBody(req) : new Uint8Array(0);
        if (!body) return nginxError(413, "Request Entity Too Large");
        const reply = handleXmlRpc(new TextDecoder().decode(body));
        for (const { method, username, password } of reply.attempts) {
          // The event id and message of HonnyPotter's forwarder (honeybee_forward_xmlrpc_failed).
          sink.emit({ eventid: "honnypotter.xmlrpc.failed", ...request, method, username, password, message: `XML-RPC authentication failed: ${username}` });
        }
        const headers: Record<string, string> = { ...PHP_HEADERS, "Content-Type": reply.contentType, Connection: "close" };
        if (reply.status === 405) headers.Allow = "POST";
        return new Response(reply.body, { status: reply.status, headers });
      }
      case "/wp-admin":
      case "/wp-admin/":
        return new Response(null, {
          status: 302,
          headers: { ...PHP_HEADERS, Location: `${site}/wp-login.php?redirect_to=${encodeURIComponent(`${site}/wp-admin/`)}&reauth=1` },
        });
      default:
        return new Response(notFoundPage(site, config.site_name), { status: 404, headers: PHP_HEADERS });
    }
  };

  const server = Bun.serve({
    hostname: config.listen_address,
    port: parsePort("http_port", config.http_port),
    idleTimeout: IDLE_TIMEOUT_S,
    maxRequestBodySize: Math.max(HARD_BODY_LIMIT, MAX_BODY, uploadMax),
    fetch: handle,
    error(err) {
      logger.error({ err }, "request failed");
      return new Response(nginxErrorPage(500, "Internal Server Error"), { status: 500, headers: { Server: NGINX, "Content-Type": "text/html" } });
    },
  });

  return {
    ports: { http: server.port ?? 0 },
    async stop() {
      await server.stop(true);
    },
  };
}
