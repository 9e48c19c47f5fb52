/**
 * The payload URLs an exploit request carries: what its injected command would download
 * (`wget http://x/y.sh`, `curl -O ...`, a bare `wget 1.2.3.4/bins.sh`), also inside the base64
 * command of a Log4Shell lookup (`.../Basic/Command/Base64/<b64>`). Only http, https and ftp:
 * the LDAP or RMI server a `${jndi:` names is never contacted, since that lookup is how the
 * attack would run code on a vulnerable server.
 */
import type { Views } from "./views.ts";

/** URLs fetched per request at most: a bot's dropper names one or two, a list of 50 is a flood. */
export const MAX_URLS = 5;
const MAX_URL_LENGTH = 2048;

const URL_RE = /\b(?:https?|ftp):\/\/[^\s'"<>`;|&(){}[\]\\^]{1,2048}/gi;
/** wget/curl followed (after options) by a host and path without a scheme: wget defaults to http. */
const BARE_RE = /\b(?:wget|curl)(?:\s|\$\{IFS\})+(?:-{1,2}[\w-]+(?:=\S+)?\s+)*((?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\/[^\s'"<>`;|&(){}\\]{0,2000})/gi;
const BASE64_RE = /\/Base64\/([A-Za-z0-9+/=_-]{8,4096})/gi;

function clean(url: string): string | null {
  const trimmed = url.replace(/[.,:!?'"]+$/, "");
  if (trimmed.length > MAX_URL_LENGTH) return null;
  try {
    const parsed = new URL(trimmed);
    if (!["http:", "https:", "ftp:"].includes(parsed.protocol) || parsed.hostname === "") return null;
  } catch {
    return null;
  }
  return trimmed;
}

function collect(text: string, into: Set<string>): void {
  for (const m of text.matchAll(URL_RE)) {
    const url = clean(m[0]);
    if (url) into.add(url);
  }
  for (const m of text.matchAll(BARE_RE)) {
    const url = clean(`http://${m[1]}`);
    if (url) into.add(url);
  }
}

/** Header fields that name this server or the page before, not a payload. */
const NOT_PAYLOAD = new Set(["host", "referer", "origin"]);

export function payloadUrls(v: Views): string[] {
  const found = new Set<string>();
  const texts = [v.path, v.query, v.bodyDecoded, ...v.headers.filter(([n]) => !NOT_PAYLOAD.has(n.toLowerCase())).map(([, value]) => value)];
  for (const text of texts) {
    collect(text, found);
    for (const m of text.matchAll(BASE64_RE)) {
      const decoded = Buffer.from(m[1]!.replaceAll("-", "+").replaceAll("_", "/"), "base64").toString("latin1");
      collect(decoded, found);
    }
  }
  return [...found].slice(0, MAX_URLS);
}
