import { describe, expect, test } from "bun:test";
import { type CompletedRequest, HttpConnection, type InvalidRequest, MAX_HEAD_BYTES } from "../../src/honeypots/web/connection";
import { APACHE_LIMITS, BodyReader, framing, parseHead } from "../../src/honeypots/web/http-parse";
import { Persona, type ServerKind } from "../../src/honeypots/web/persona";
import { normalizePath, route, type SiteOptions } from "../../src/honeypots/web/site";

const bytes = (text: string) => Buffer.from(text, "latin1");

describe("request heads", () => {
  test("fields keep their case and order; bare LF, HTTP/1.0 without Host and HTTP/0.9 are read as Apache reads them", () => {
    expect(parseHead(bytes("\r\nGET /a?b=1 HTTP/1.1\r\nHost: x\r\nX-B: 2\r\nx-a:  1 \r\n\r\nrest"))).toEqual({
      kind: "head",
      head: { method: "GET", target: "/a?b=1", version: "HTTP/1.1", headers: [["Host", "x"], ["X-B", "2"], ["x-a", "1"]] },
      consumed: 52,
    });
    expect(parseHead(bytes("GET / HTTP/1.0\n\n"))).toMatchObject({ kind: "head", head: { version: "HTTP/1.0", headers: [] } });
    expect(parseHead(bytes("GET /\r\n"))).toMatchObject({ kind: "head", head: { version: "HTTP/0.9" } });
    expect(parseHead(bytes("FOO /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n"))).toMatchObject({ kind: "head", head: { method: "FOO", target: "/\xff\xfe" } });
    expect(parseHead(bytes("GET / HTTP/1.1\r\nHost: x\r\n"))).toEqual({ kind: "more" });
  });

  test("what Apache refuses", () => {
    const error = (text: string) => (parseHead(bytes(text)) as { error?: string }).error;
    expect(error("GET /a b HTTP/1.1\r\n\r\n")).toBe("bad_request_line");
    expect(error("\x16\x03\x01\x02\x00\x01\n")).toBe("bad_request_line");
    expect(error("OPTIONS / RTSP/1.0\r\n\r\n")).toBe("bad_version");
    expect(error("GET / HTTP/1.1\r\n\r\n")).toBe("no_host");
    expect(error("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n")).toBe("bad_header");
    expect(error(`GET /${"a".repeat(9000)}`)).toBe("line_too_long");
    expect(error(`GET / HTTP/1.1\r\nHost: x\r\nX: ${"a".repeat(9000)}\r\n\r\n`)).toBe("field_too_long");
    expect(error(`GET / HTTP/1.1\r\nHost: x\r\n${"X: 1\r\n".repeat(101)}\r\n`)).toBe("too_many_fields");
  });

  test("body framing", () => {
    const head = (...headers: [string, string][]) => ({ method: "POST", target: "/", version: "HTTP/1.1", headers });
    expect(framing(head(["Content-Length", "12"]))).toEqual({ kind: "length", length: 12 });
    expect(framing(head(["Transfer-Encoding", "gzip, chunked"], ["Content-Length", "3"]))).toEqual({ kind: "chunked" });
    expect(framing(head(["Content-Length", "1"], ["Content-Length", "2"]))).toMatchObject({ kind: "error" });
    expect(framing(head(["Content-Length", "-1"]))).toMatchObject({ kind: "error" });
    expect(framing(head())).toEqual({ kind: "none" });
  });

  test("a chunked body, fed a byte at a time, keeps only its first bytes", () => {
    const reader = new BodyReader({ kind: "chunked" }, 5);
    const wire = bytes("3;ext=1\r\nabc\r\n4\r\ndefg\r\n0\r\nTrailer: x\r\n\r\nNEXT");
    let used = 0;
    while (!reader.done) used += reader.feed(wire.subarray(used, used + 1));
    expect({ body: reader.body().toString(), size: reader.size, truncated: reader.truncated, rest: wire.subarray(used).toString() }).toEqual({ body: "abcde", size: 7, truncated: true, rest: "NEXT" });
    const bad = new BodyReader({ kind: "chunked" }, 5);
    bad.feed(bytes("zz\r\n"));
    expect(bad.error).toBe("bad chunk size");
  });
});

/** An HttpConnection over a transport that keeps what it writes. */
function connection(kind: ServerKind, answer: (req: CompletedRequest) => { status: number } = () => ({ status: 404 }), maxRequests = 100) {
  const out: Buffer[] = [];
  const requests: CompletedRequest[] = [];
  const invalid: InvalidRequest[] = [];
  let ended = false;
  const persona = new Persona(kind);
  const conn = new HttpConnection(
    { write: (b) => out.push(Buffer.from(b)), end: () => (ended = true) },
    { persona, hostname: "debian", tls: false, plainToTls: false, bodyMax: 16, maxRequests, limits: APACHE_LIMITS },
    {
      request: (req) => {
        requests.push(req);
        return { ...persona.errorReply(answer(req).status, { method: req.head.method, host: "x", port: 80 }) };
      },
      abandoned: (req) => requests.push(req),
      invalid: (info) => invalid.push(info),
    },
  );
  return { conn, requests, invalid, text: () => Buffer.concat(out).toString("latin1"), ended: () => ended };
}

describe("a connection", () => {
  test("pipelined requests are answered in order; the last one allowed closes", () => {
    const c = connection("apache", undefined, 2);
    c.conn.feed(bytes("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n01234567890123456789GET /3 HTTP/1.1\r\nHost: x\r\n\r\n"));
    expect(c.requests.map((r) => [r.head.target, r.body.toString(), r.bodySize, r.truncated])).toEqual([
      ["/1", "", 0, false],
      ["/2", "0123456789012345", 20, true],
    ]);
    expect(c.text().match(/Keep-Alive: [^\r]*|Connection: [^\r]*/g)).toEqual(["Keep-Alive: timeout=5, max=2", "Connection: Keep-Alive", "Connection: close"]);
    expect(c.ended()).toBe(true);
  });

  test("a head past the limits gets the server's 400 or 414 and the connection ends", () => {
    const apache = connection("apache");
    apache.conn.feed(bytes(`GET / HTTP/1.1\r\nHost: x\r\nCookie: ${"a".repeat(10_000)}\r\n\r\n`));
    expect(apache.text()).toContain("Size of a request header field exceeds server limit.");
    expect(apache.invalid.map((i) => [i.reason, i.status])).toEqual([["field_too_long", 400]]);
    const nginx = connection("nginx");
    nginx.conn.feed(bytes(`GET / HTTP/1.1\r\nHost: x\r\nCookie: ${"a".repeat(10_000)}\r\n\r\n`));
    expect(nginx.text()).toContain("<head><title>400 Request Header Or Cookie Too Large</title></head>");
    const flood = connection("apache");
    flood.conn.feed(Buffer.alloc(MAX_HEAD_BYTES * 3, 0x41));
    expect(flood.text()).toStartWith("HTTP/1.1 414 Request-URI Too Long\r\n");
    expect(flood.ended()).toBe(true);
  });

  test("a request cut short is recorded when the connection closes; so are bytes that never made a head", () => {
    const c = connection("apache");
    c.conn.feed(bytes("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
    c.conn.closed();
    expect(c.requests.map((r) => [r.head.target, r.body.toString(), r.incomplete])).toEqual([["/x", "abc", true]]);
    const d = connection("apache");
    d.conn.feed(bytes("\x16\x03\x01\x00\x05hello"));
    d.conn.closed();
    expect(d.invalid.map((i) => i.reason)).toEqual(["incomplete request head"]);
  });

  test("Expect: 100-continue is answered before the body", () => {
    const c = connection("apache");
    c.conn.feed(bytes("POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"));
    expect(c.text()).toBe("HTTP/1.1 100 Continue\r\n\r\n");
  });
});

describe("the site", () => {
  const opts = (kind: ServerKind): SiteOptions => ({ persona: new Persona(kind), hostname: "debian", envBait: true, seed: "s", title: "Portal", installedAt: new Date(0) });
  const get = (kind: ServerKind, target: string, method = "GET") => route({ method, target, headers: [["Host", "www.example.org"]], tls: false }, opts(kind));

  test("paths are normalised as the servers do; climbing out of the root is a 400", () => {
    expect(normalizePath("/a/./b/../c")).toBe("/a/c");
    expect(normalizePath("/cgi-bin/.%2e/.%2e/etc/passwd")).toBeNull();
    expect(get("apache", "/cgi-bin/.%2e/.%2e/.%2e/etc/passwd").status).toBe(400);
    expect(get("apache", "/a%2fb").status).toBe(404);
    expect(get("apache", "http://www.example.org/").status).toBe(200);
  });

  test("statuses by method, as each server decides them", () => {
    expect([get("apache", "/", "POST").status, get("nginx", "/", "POST").status]).toEqual([200, 405]);
    expect([get("apache", "/", "FOO").status, get("apache", "/", "PUT").status, get("apache", "/", "TRACE").status]).toEqual([501, 405, 405]);
    expect([get("apache", "/.htaccess").status, get("nginx", "/.htaccess").status, get("apache", "/server-status").status]).toEqual([403, 404, 403]);
    expect(get("apache", "/", "OPTIONS")).toMatchObject({ status: 200, headers: [["Allow", "GET,POST,OPTIONS,HEAD"]] });
  });

  test("error pages word for word", () => {
    const apache404 = new Persona("apache").frame(get("apache", "/nope"), { head: false, keepAlive: true, remaining: 100 }, new Date(0));
    expect(apache404.toString("latin1")).toBe(
      'HTTP/1.1 404 Not Found\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nServer: Apache/2.4.62 (Debian)\r\nContent-Length: 277\r\nKeep-Alive: timeout=5, max=100\r\nConnection: Keep-Alive\r\nContent-Type: text/html; charset=iso-8859-1\r\n\r\n<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n<hr>\n<address>Apache/2.4.62 (Debian) Server at www.example.org Port 80</address>\n</body></html>\n',
    );
    const nginx404 = new Persona("nginx").frame(get("nginx", "/nope"), { head: false, keepAlive: true, remaining: 100 }, new Date(0));
    expect(nginx404.toString("latin1")).toBe(
      "HTTP/1.1 404 Not Found\r\nServer: nginx/1.22.1\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Type: text/html\r\nContent-Length: 153\r\nConnection: keep-alive\r\n\r\n<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n",
    );
  });

  test("the bait .env is the same on every request to a pot and differs between pots", () => {
    const env = (seed: string) => String(route({ method: "GET", target: "/.env", headers: [["Host", "shop.example.org"]], tls: false }, { ...opts("apache"), seed }).body);
    expect(env("a")).toBe(env("a"));
    expect(env("a")).not.toBe(env("b"));
    expect(env("a")).toMatch(/^DB_PASSWORD=[A-Za-z0-9]{20}$/m);
    expect(env("a")).toMatch(/^AWS_ACCESS_KEY_ID=AKIA[A-Z2-7]{16}$/m);
    expect(route({ method: "GET", target: "/.env", headers: [], tls: false }, { ...opts("apache"), envBait: false }).status).toBe(404);
  });
});
