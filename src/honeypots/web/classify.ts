/**
 * Which exploit families a request belongs to, and the text that gave it away (`indicator`).
 * A table of families, each a test over the request's texts (views.ts), so a new family is one
 * entry; every family has a test on a request as bots send it (tests/honeypots/web-classify).
 * Patterns are plain JavaScript regexes over bounded input (the path and query are within
 * Apache's 8190-byte line limit, the body within body_max_bytes) and none of them backtracks
 * over nested or unbounded quantifiers that could meet again.
 */
import { type RequestText, type Views, views } from "./views.ts";

export interface Finding {
  family: string;
  /** The matching text, at most INDICATOR_MAX characters. */
  indicator: string;
}

const INDICATOR_MAX = 200;

interface Family {
  family: string;
  test(v: Views): string | null;
}

const clip = (text: string) => text.slice(0, INDICATOR_MAX);

/** The first match of `re` in any of `texts`. */
function match(re: RegExp, ...texts: string[]): string | null {
  for (const text of texts) {
    const m = re.exec(text);
    if (m) return clip(m[0]);
  }
  return null;
}

/** From the first match of `re` to the end of the text it is in (a command line that follows). */
function fromMatch(re: RegExp, ...texts: string[]): string | null {
  for (const text of texts) {
    const m = re.exec(text);
    if (m) return clip(text.slice(m.index));
  }
  return null;
}

const headerValues = (v: Views) => v.headers.map(([, value]) => value);

/**
 * `${lower:j}`, `${::-n}`, `${env:X:-d}`, `${date:'i'}`: the tricks that hide `${jndi:` from
 * filters. The quantifiers are bounded: an unbounded `[^}]*` before `:-` backtracks
 * quadratically on a body full of `:-`.
 */
function unobfuscateLookups(text: string): string {
  let out = text;
  for (let i = 0; i < 8; i++) {
    const next = out
      .replace(/\$\{(?:lower|upper):([^${}]{0,64})\}/gi, "$1")
      .replace(/\$\{[^${}:]{0,64}:[^${}]{0,64}:-([^${}]{0,64})\}/g, "$1")
      .replace(/\$\{:{0,8}-([^${}]{0,64})\}/g, "$1")
      .replace(/\$\{date:'([^${}']{0,64})'\}/gi, "$1");
    if (next === out) break;
    out = next;
  }
  return out;
}

/** Paths (decoded) of router, camera and NAS web interfaces that botnets exploit. */
const ROUTER_PATHS =
  /\/(?:cgi-bin\/(?:luci|kerbynet|nas_sharing\.cgi|mainfunction\.cgi|ViewLog\.asp|supervisor\/|jarrewrite\.sh)|boaform\/|GponForm\/|HNAP1|setup\.cgi|tmUnblock\.cgi|hndUnblock\.cgi|hedwig\.cgi|getcfg\.php|apply\.cgi|ctrlt\/DeviceUpgrade|picsdesc\.xml|goform\/|UD\/act|device\.rsp|language\/Swedish|board\.cgi|command\.php|SDK\/webLanguage|shell$)/i;

const WEBSHELLS = /\/(?:shell|cmd|c99|r57|wso\d*|alfa(?:-rex)?|b374k|indoxploit|mini|up|uploader|x|xx|ak47|marijuana|leaf|sym|priv8|0x|bypass|fm|filemanager|wp-info|about|radio|class-t\.api|inputs|wp-conflg)\.php$/i;

const FAMILIES: Family[] = [
  {
    family: "path_traversal",
    test: (v) =>
      match(/(?:(?:\.|%2e|%252e|%c0%ae|%u002e){2}(?:\/|\\|%2f|%5c|%252f|%c0%af))+[^?&#\s]*/i, v.rawPath, v.rawQuery) ??
      match(/\/etc\/(?:passwd|shadow|hosts)\b|\b(?:win|boot|system)\.ini\b/i, v.path, v.query),
  },
  { family: "env_probe", test: (v) => match(/(?:^|\/)\.env(?:\.[\w.-]+)?$/i, v.path) },
  { family: "git_probe", test: (v) => match(/(?:^|\/)\.git(?:\/.*|$)/i, v.path) },
  { family: "phpunit_eval_stdin", test: (v) => match(/\/phpunit\/.*eval-stdin\.php|eval-stdin\.php/i, v.path) },
  {
    family: "log4shell",
    test: (v) => {
      for (const text of [v.path, v.query, ...headerValues(v), v.bodyDecoded]) {
        if (!text.includes("${")) continue;
        const plain = unobfuscateLookups(text);
        const m = /\$\{jndi:[^}]*\}?/i.exec(plain);
        if (m) return clip(m[0]);
      }
      return null;
    },
  },
  { family: "shellshock", test: (v) => fromMatch(/\(\)\s*\{[^}]{0,100}\}\s*;/, ...headerValues(v), v.query, v.bodyDecoded) },
  { family: "router_cgi", test: (v) => match(ROUTER_PATHS, v.path) },
  {
    family: "wordpress_probe",
    test: (v) => match(/\/(?:wp-(?:login|config|signup|cron|trackback)\.php[\w.~-]*|wp-(?:admin|content|includes|json)\/?.*|xmlrpc\.php|wlwmanifest\.xml)$/i, v.path) ?? match(/rest_route=\/wp\/v2\/\w+/i, v.query),
  },
  { family: "spring4shell", test: (v) => match(/class\.module\.classLoader[\w.[\]]*/i, v.query, v.bodyDecoded, ...headerValues(v)) },
  { family: "spring_actuator", test: (v) => match(/\/(?:actuator(?:\/[\w./-]*)?|jolokia(?:\/.*)?|heapdump)$/i, v.path) },
  {
    family: "php_cgi_arg_injection",
    // CVE-2012-1823 and CVE-2024-4577 (a soft hyphen, 0xAD, that Windows code pages turn into "-").
    test: (v) => match(/^(?:%AD|-|%2D)d(?:\+|%20)[^&#]*/i, v.rawQuery) ?? match(/(?:allow_url_include|auto_prepend_file)\s*=\s*[^&\s]*/i, v.query),
  },
  { family: "think_php", test: (v) => match(/\\?think\\(?:app|Container|Request|template\\driver\\file)[^&]*|invokefunction[^&]*/i, v.query, v.path) },
  { family: "webshell_probe", test: (v) => match(WEBSHELLS, v.path) },
  {
    family: "command_injection",
    test: (v) =>
      fromMatch(
        /(?:[;|`&]|\$\(|\$\{IFS\})\s*(?:wget|curl|tftp|busybox|chmod|nc|ncat|bash|sh|rm\s+-rf|cd\s+\/tmp)(?:\s|\$\{IFS\}|\+|;|$)/i,
        v.path,
        v.query,
        v.bodyDecoded,
      ) ?? fromMatch(/\b(?:wget|curl)(?:\s|\$\{IFS\})+(?:-\S+\s+)*(?:https?:\/\/|\d{1,3}(?:\.\d{1,3}){3})/i, v.path, v.query, v.bodyDecoded),
  },
  {
    family: "sql_injection",
    test: (v) => match(/\bunion(?:\s|\/\*\*\/)+(?:all(?:\s|\/\*\*\/)+)?select\b|'\s*or\s+'?1'?\s*=\s*'?1|\bsleep\(\s*\d+\s*\)|\bbenchmark\(\s*\d+|\binformation_schema\b/i, v.query, v.bodyDecoded),
  },
  { family: "ognl_injection", test: (v) => match(/[%$]\{\s*\(#[^}]{0,180}|#_memberAccess|@ognl\.OgnlContext/i, v.path, v.query, ...headerValues(v), v.bodyDecoded) },
  {
    family: "appliance_probe",
    test: (v) =>
      match(/\/(?:remote\/fgt_lang|dana-na\/|dana-cached\/|vpns?\/|\+CSCOE\+\/|\+CSCOT\+\/|global-protect\/|ssl-vpn\/|mgmt\/tm\/|tmui\/|mgmt\/shared\/authn)/i, v.path),
  },
  { family: "phpmyadmin_probe", test: (v) => match(/\/(?:phpmyadmin|pma|myadmin|phpMyAdmin\d*|mysqladmin|dbadmin)(?:\/|$)/i, v.path) },
  {
    family: "proxy_probe",
    // Open-proxy checks: CONNECT, or a request for another site's absolute URL.
    test: (v) => (v.method === "CONNECT" ? clip(`CONNECT ${v.target}`) : match(/^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]*/i, v.target)),
  },
  { family: "exchange_probe", test: (v) => match(/\/(?:autodiscover\/autodiscover\.json|owa\/auth\/|ecp\/|mapi\/nspi|aspnet_client\/)/i, v.path) },
];

/** Every family the request belongs to, in the table's order. */
export function classify(req: RequestText): Finding[] {
  const v = views(req);
  const found: Finding[] = [];
  for (const { family, test } of FAMILIES) {
    const indicator = test(v);
    if (indicator !== null) found.push({ family, indicator });
  }
  return found;
}

export const FAMILY_NAMES = FAMILIES.map((f) => f.family);
