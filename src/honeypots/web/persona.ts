/**
 * The two servers the pot can pass for, as Debian 12 ships them: Apache 2.4.62 with mod_php
 * (PHP 8.2) and nginx 1.22.1 with PHP-FPM. Each writes its headers in its own order and its
 * error pages in its own words, byte for byte where scanners compare them (the Server header
 * and error pages are what `nmap -sV` and Shodan-style fingerprints read).
 */

export type ServerKind = "apache" | "nginx";

export const APACHE = "Apache/2.4.62 (Debian)";
export const NGINX = "nginx/1.22.1";
export const PHP = "PHP/8.2.29";

const REASONS: Record<number, string> = {
  100: "Continue",
  200: "OK",
  302: "Found",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  414: "Request-URI Too Long",
  501: "Not Implemented",
};

/** nginx's reason phrases where they differ from Apache's. */
const NGINX_REASONS: Record<number, string> = { 405: "Not Allowed", 414: "Request-URI Too Large" };

export interface PageContext {
  method: string;
  /** The host the client asked for (Host header without its port), or the server's name. */
  host: string;
  /** The port as the client sees it: from the Host header, else the scheme's default. */
  port: number;
  /** Extra words Apache puts in a 400 page, e.g. the reason a header was refused. */
  detail?: string;
  /** The 400 for plain HTTP sent to the TLS port. */
  plainToTls?: boolean;
}

export interface Reply {
  status: number;
  /** Headers of the resource, in the order the server writes them (Last-Modified, ETag, X-Powered-By, Set-Cookie...). */
  headers: [string, string][];
  /** null: no Content-Type header at all (Apache for a file whose type it does not know). */
  contentType: string | null;
  body: string | Uint8Array;
}

export interface Connection {
  /** A HEAD request: headers only. */
  head: boolean;
  /** The connection stays open after this reply. */
  keepAlive: boolean;
  /** Requests this connection may still make after this one (Apache's Keep-Alive max). */
  remaining: number;
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

function apacheErrorBody(status: number, ctx: PageContext): string {
  const reason = REASONS[status] ?? "Error";
  let text: string;
  switch (status) {
    case 400:
      text = `<p>Your browser sent a request that this server could not understand.<br />\n${
        ctx.plainToTls ? "Reason: You're speaking plain HTTP to an SSL-enabled server port.<br />\n Instead use the HTTPS scheme to access this URL, please.<br />\n" : ctx.detail ? `${escapeHtml(ctx.detail)}<br />\n` : ""
      }</p>`;
      break;
    case 403:
      text = "<p>You don't have permission to access this resource.</p>";
      break;
    case 405:
      text = `<p>The requested method ${escapeHtml(ctx.method)} is not allowed for this URL.</p>`;
      break;
    case 414:
      text = "<p>The requested URL's length exceeds the capacity\nlimit for this server.<br />\n</p>";
      break;
    case 501:
      text = `<p>${escapeHtml(ctx.method)} not supported for current URL.<br />\n</p>`;
      break;
    default:
      text = "<p>The requested URL was not found on this server.</p>";
  }
  return `<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">
<html><head>
<title>${status} ${reason}</title>
</head><body>
<h1>${reason}</h1>
${text}
<hr>
<address>${APACHE} Server at ${escapeHtml(ctx.host)} Port ${ctx.port}</address>
</body></html>
`;
}

function nginxErrorBody(status: number, ctx: PageContext): string {
  const reason = NGINX_REASONS[status] ?? REASONS[status] ?? "Error";
  if (ctx.plainToTls) {
    return `<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n<hr><center>${NGINX}</center>\r\n</body>\r\n</html>\r\n`;
  }
  const title = status === 400 && ctx.detail === "header" ? "400 Request Header Or Cookie Too Large" : `${status} ${reason}`;
  const h1 = status === 400 && ctx.detail === "header" ? `<center><h1>400 Bad Request</h1></center>\r\n<center>Request Header Or Cookie Too Large</center>` : `<center><h1>${status} ${reason}</h1></center>`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n${h1}\r\n<hr><center>${NGINX}</center>\r\n</body>\r\n</html>\r\n`;
}

export class Persona {
  readonly server: string;

  constructor(readonly kind: ServerKind) {
    this.server = kind === "apache" ? APACHE : NGINX;
  }

  errorReply(status: number, ctx: PageContext): Reply {
    if (this.kind === "apache") return { status, headers: [], contentType: "text/html; charset=iso-8859-1", body: apacheErrorBody(status, ctx) };
    return { status, headers: [], contentType: "text/html", body: nginxErrorBody(status, ctx) };
  }

  /** The bytes of a whole response: status line, headers in the server's order, body. */
  frame(reply: Reply, conn: Connection, now = new Date()): Buffer {
    const body = typeof reply.body === "string" ? Buffer.from(reply.body, "latin1") : Buffer.from(reply.body);
    const reasons = this.kind === "nginx" ? { ...REASONS, ...NGINX_REASONS } : REASONS;
    const lines = [`HTTP/1.1 ${reply.status} ${reasons[reply.status] ?? "Unknown"}`];
    const date = now.toUTCString();
    const length: [string, string] = ["Content-Length", String(body.length)];
    const type: [string, string][] = reply.contentType === null ? [] : [["Content-Type", reply.contentType]];
    let headers: [string, string][];
    if (this.kind === "apache") {
      const keepAlive: [string, string][] = conn.keepAlive
        ? [
            ["Keep-Alive", `timeout=5, max=${conn.remaining}`],
            ["Connection", "Keep-Alive"],
          ]
        : [["Connection", "close"]];
      headers = [["Date", date], ["Server", this.server], ...reply.headers, length, ...keepAlive, ...type];
    } else {
      headers = [["Server", this.server], ["Date", date], ...type, length, ["Connection", conn.keepAlive ? "keep-alive" : "close"], ...reply.headers];
    }
    for (const [name, value] of headers) lines.push(`${name}: ${value}`);
    const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
    return conn.head ? head : Buffer.concat([head, body]);
  }
}
