import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { NODE_ID, Relay, removeDir, run, startPot, type Pot } from "./harness";

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

let relay: Relay;
let pot: Pot<"honnypotter">;
let base: string;

beforeAll(async () => {
  relay = Relay.start();
  pot = await startPot("honnypotter", { http_port: "0", site_name: "Acme News" }, relay);
  base = `http://127.0.0.1:${pot.ports.http}`;
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  removeDir(pot.dir);
});

/** curl -i, split into status, lower-cased headers and body. */
async function curl(...args: string[]): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const r = await run(["curl", "-s", "-i", ...args]);
  expect(r.code).toBe(0);
  const cut = r.stdout.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = r.stdout.slice(0, cut).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, body: r.stdout.slice(cut + 4) };
}

function request(uri: string, method = "POST") {
  return {
    src_ip: "127.0.0.1",
    src_port: expect.any(Number),
    dst_port: pot.ports.http,
    user_agent: expect.stringMatching(/^curl\//),
    request_uri: uri,
    request_method: method,
    timestamp: TIMESTAMP,
    pot_id: "honnypotter-test",
    pot_type: "honnypotter",
  };
}

const xmlCall = (method: string, ...params: string[]) =>
  `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${params.map((p) => `<param><value><string>${p}</string></value></param>`).join("")}</params></methodCall>`;

const fault = (code: number, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<methodResponse>\n  <fault>\n    <value>\n      <struct>\n        <member>\n          <name>faultCode</name>\n          <value><int>${code}</int></value>\n        </member>\n        <member>\n          <name>faultString</name>\n          <value><string>${message}</string></value>\n        </member>\n      </struct>\n    </value>\n  </fault>\n</methodResponse>\n`;

describe("the WordPress login page", () => {
  test("GET / and /wp-login.php show the login form with WordPress' headers and no event", async () => {
    for (const path of ["/", "/wp-login.php"]) {
      const r = await curl(`${base}${path}`);
      expect(r.status).toBe(200);
      expect(r.headers).toMatchObject({
        server: "nginx/1.22.1",
        "x-powered-by": expect.stringMatching(/^PHP\/8\.2\./),
        "content-type": "text/html; charset=UTF-8",
        "set-cookie": "wordpress_test_cookie=WP%20Cookie%20check; path=/",
        "cache-control": "no-cache, must-revalidate, max-age=0, no-store, private",
      });
      expect(r.body).toContain("<title>Log In &lsaquo; Acme News &#8212; WordPress</title>");
      expect(r.body).toContain('<form name="loginform" id="loginform" action="' + base + '/wp-login.php" method="post">');
      expect(r.body).toContain('name="log" id="user_login"');
      expect(r.body).toContain('name="pwd" id="user_pass"');
      expect(r.body).not.toContain("login_error");
    }
  });

  test("a POST to /wp-login.php fails like WordPress for a known user and is recorded", async () => {
    const r = await curl("-X", "POST", `${base}/wp-login.php`, "-d", "log=admin&pwd=hunter2&testcookie=1", "-b", "wordpress_test_cookie=WP%20Cookie%20check");
    expect(r.status).toBe(200);
    expect(r.body).toContain(
      `<div id="login_error" class="notice notice-error"><p><strong>Error:</strong> The password you entered for the username <strong>admin</strong> is incorrect. <a href="${base}/wp-login.php?action=lostpassword">Lost your password?</a></p></div>`,
    );
    expect(r.body).toContain('value="admin" size="20"');
    const event = await relay.event("honnypotter.login.failed", { password: "hunter2" });
    expect(event).toMatchObject({ ...request("/wp-login.php"), eventid: "honnypotter.login.failed", username: "admin", password: "hunter2", message: "Failed login attempt: admin from 127.0.0.1" });
    expect(relay.lines.find((l) => l.includes('"password":"hunter2"'))).toContain(`"node_id":${NODE_ID}`);
  });

  test("a POST to the standalone script path: unknown user wording, HTML escaped, query string kept", async () => {
    const r = await curl("-X", "POST", `${base}/standalone.php?x=1`, "--data-urlencode", "log=<b>bob</b>", "--data-urlencode", "pwd=p&w=d");
    expect(r.body).toContain("<strong>Error:</strong> The username <strong>&lt;b&gt;bob&lt;/b&gt;</strong> is not registered on this site. If you are unsure of your username, try your email address instead.");
    const event = await relay.event("honnypotter.login.failed", { password: "p&w=d" });
    expect(event).toMatchObject({ ...request("/standalone.php?x=1"), username: "<b>bob</b>", message: "Failed login attempt: <b>bob</b> from 127.0.0.1" });
  });

  test("without the test cookie, with missing fields, multipart, JSON and binary bodies: WordPress' answers", async () => {
    const noCookie = await curl("-X", "POST", `${base}/wp-login.php`, "-d", "log=admin&pwd=x1&testcookie=1");
    expect(noCookie.body).toContain("<strong>Error:</strong> Cookies are blocked or not supported by your browser.");
    await relay.event("honnypotter.login.failed", { password: "x1" });

    const empty = await curl("-X", "POST", `${base}/wp-login.php`, "-d", "log=&pwd=");
    expect(empty.body).toContain("<strong>Error:</strong> The username field is empty.<br />\n<strong>Error:</strong> The password field is empty.");
    const noPassword = await curl("-X", "POST", `${base}/wp-login.php`, "-d", "log=onlyname");
    expect(noPassword.body).toContain("<strong>Error:</strong> The password field is empty.");
    expect(await relay.event("honnypotter.login.failed", { username: "onlyname" })).toMatchObject({ password: "" });

    const multipart = await curl("-X", "POST", `${base}/wp-login.php`, "-F", "log=multi", "-F", "pwd=part");
    expect(multipart.body).toContain("The username <strong>multi</strong> is not registered");
    await relay.event("honnypotter.login.failed", { username: "multi", password: "part" });

    // PHP fills $_POST only from forms: a JSON body is a plain visit to the page.
    const json = await curl("-X", "POST", `${base}/wp-login.php`, "-H", "Content-Type: application/json", "-d", '{"log":"json","pwd":"x"}');
    expect(json.status).toBe(200);
    expect(json.body).not.toContain("login_error");

    const garbage = await fetch(`${base}/wp-login.php`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new Uint8Array([0xff, 0x00, 0x25, 0x26, 0x3d, 0xc3, 0x28, 0x0a]) });
    expect(garbage.status).toBe(200);
    expect(await garbage.text()).toContain("loginform");
    expect(relay.all.some((e) => e.username === "json")).toBe(false);
  });

  test("bodies over 64 KiB get nginx's 413, with or without a Content-Length, and the server carries on", async () => {
    const big = "log=admin&pwd=" + "x".repeat(70 * 1024);
    const declared = await curl("-X", "POST", `${base}/wp-login.php`, "--data-binary", big);
    expect(declared.status).toBe(413);
    expect(declared.headers).toMatchObject({ server: "nginx/1.22.1", "content-type": "text/html" });
    expect(declared.body).toBe("<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n");
    const chunked = await curl("-X", "POST", `${base}/xmlrpc.php`, "-H", "Transfer-Encoding: chunked", "--data-binary", big);
    expect(chunked.status).toBe(413);
    expect((await curl(`${base}/wp-login.php`)).status).toBe(200);
  });

  test("other paths: /wp-admin/ redirects to the login, a bad Host is nginx's 400, anything else WordPress' 404", async () => {
    const admin = await curl(`${base}/wp-admin/`);
    expect(admin.status).toBe(302);
    expect(admin.headers.location).toBe(`${base}/wp-login.php?redirect_to=${encodeURIComponent(`${base}/wp-admin/`)}&reauth=1`);
    const badHost = await curl("-H", 'Host: "><script>', `${base}/wp-login.php`);
    expect(badHost.status).toBe(400);
    expect(badHost.body).toContain("<center><h1>400 Bad Request</h1></center>");
    const missing = await curl(`${base}/.env`);
    expect(missing.status).toBe(404);
    expect(missing.body).toContain("Page not found &#8211; Acme News");
  });
});

describe("xmlrpc.php", () => {
  test("wp.getUsersBlogs gets fault 403 and is recorded", async () => {
    const r = await curl("-X", "POST", `${base}/xmlrpc.php`, "-H", "Content-Type: text/xml", "--data-binary", xmlCall("wp.getUsersBlogs", "admin", "s3cret"));
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("text/xml; charset=UTF-8");
    expect(r.body).toBe(fault(403, "Incorrect username or password."));
    const event = await relay.event("honnypotter.xmlrpc.failed", { password: "s3cret" });
    expect(event).toMatchObject({
      ...request("/xmlrpc.php"),
      eventid: "honnypotter.xmlrpc.failed",
      method: "wp.getUsersBlogs",
      username: "admin",
      message: "XML-RPC authentication failed: admin",
    });
  });

  test("system.multicall: one event per guess, one fault per call", async () => {
    const call = (user: string, pw: string) =>
      `<value><struct><member><name>methodName</name><value><string>wp.getUsersBlogs</string></value></member><member><name>params</name><value><array><data><value><string>${user}</string></value><value><string>${pw}</string></value></data></array></value></member></struct></value>`;
    const body = `<?xml version="1.0"?><methodCall><methodName>system.multicall</methodName><params><param><value><array><data>${call("admin", "m1")}${call("admin", "m2")}${call("editor", "m3")}</data></array></value></param></params></methodCall>`;
    const r = await curl("-X", "POST", `${base}/xmlrpc.php`, "--data-binary", body);
    expect(r.body.match(/<name>faultCode<\/name><value><int>403<\/int>/g)?.length).toBe(3);
    for (const [username, password] of [["admin", "m1"], ["admin", "m2"], ["editor", "m3"]]) {
      expect(await relay.event("honnypotter.xmlrpc.failed", { password })).toMatchObject({ method: "wp.getUsersBlogs", username });
    }
  });

  test("GET, garbage, DOCTYPE and unknown methods get IXR's answers and no event", async () => {
    const get = await curl(`${base}/xmlrpc.php`);
    expect(get.status).toBe(405);
    expect(get.headers).toMatchObject({ allow: "POST", "content-type": "text/plain;charset=UTF-8" });
    expect(get.body).toBe("XML-RPC server accepts POST requests only.");
    const parseError = fault(-32700, "parse error. not well formed");
    expect((await curl("-X", "POST", `${base}/xmlrpc.php`, "--data-binary", "\x01\x02<<garbage&")).body).toBe(parseError);
    const doctype = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]>${xmlCall("wp.getUsersBlogs", "&a;", "z")}`;
    expect((await curl("-X", "POST", `${base}/xmlrpc.php`, "--data-binary", doctype)).body).toBe(parseError);
    expect((await curl("-X", "POST", `${base}/xmlrpc.php`, "--data-binary", xmlCall("evil.<x>"))).body).toBe(parseError);
    expect((await curl("-X", "POST", `${base}/xmlrpc.php`, "--data-binary", xmlCall("no.such", "a"))).body).toBe(fault(-32601, "server error. requested method no.such does not exist."));
    expect(relay.all.filter((e) => e.eventid === "honnypotter.xmlrpc.failed" && e.password === "z")).toEqual([]);
  });
});

describe("shutdown", () => {
  test("SIGTERM exits 0 and every event is both on the relay and in log/honnypotter.json", async () => {
    expect(await pot.stop()).toBe(0);
    expect(relay.lines.length).toBeGreaterThanOrEqual(9);
    expect(relay.lines).toEqual(pot.fileLines());
  });
});
