/**
 * What outputs show of their credentials (docs/outputs.md): the one place that hides them, for
 * GET /api/v1/outputs, last_error and the log. The stored definition keeps them: delivery
 * needs them.
 */
import type { OutputDefinition } from "./model";

export const SET = "(set)";

/** Fields that hold credentials. */
const SECRET_FIELDS = ["secret", "password", "pass", "token"] as const;

/** Query parameters whose value is a credential (signed URLs, API keys, OAuth codes). */
const SECRET_PARAM = /key|token|secret|pass|pwd|sig|auth|credential|session|^code$/i;

/** A path segment or value that looks generated (an id or key), not chosen by a person. */
const looksGenerated = (s: string) => s.length >= 20 && /^[A-Za-z0-9_~%=+.-]+$/.test(s) && /[0-9]/.test(s) && /[A-Za-z]/.test(s);

/** Hosts of chat and automation services whose webhook URL is itself the credential. */
const CHAT_HOSTS = /(^|\.)(hooks\.slack\.com|webhook\.office\.com|outlook\.office(365)?\.com|logic\.azure\.com|powerplatform\.com|powerautomate\.com|discord(app)?\.com|chat\.googleapis\.com|api\.telegram\.org|hooks\.zapier\.com|maker\.ifttt\.com)$/i;

/**
 * A URL with its credentials hidden: user info, the values of secret-looking query parameters,
 * path segments and values that look like keys, the fragment. With `whole` (or a chat
 * service's host) everything after the host is the secret. Never throws: it reads the text as
 * it is rather than parsing it, so an unparsable URL is hidden too, and its form is kept.
 */
export function redactUrl(url: string, whole = false): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)?([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/is.exec(url);
  if (!m) return SET;
  const [, scheme = "", authority = "", path = "", query = "", fragment = ""] = m;
  const at = authority.lastIndexOf("@");
  const host = authority.slice(at + 1);
  const shownHost = at >= 0 ? `${SET}@${host}` : host;
  if (whole || CHAT_HOSTS.test(host.replace(/:\d*$/, ""))) return `${scheme}${shownHost}${path || query || fragment ? `/${SET}` : ""}`;
  const shownPath = path
    .split("/")
    .map((seg) => (looksGenerated(seg) ? SET : seg))
    .join("/");
  const shownQuery = query
    ? `?${query
        .slice(1)
        .split("&")
        .map((pair) => {
          const eq = pair.indexOf("=");
          if (eq < 0) return looksGenerated(pair) ? SET : pair;
          const name = pair.slice(0, eq);
          const value = pair.slice(eq + 1);
          return value && (SECRET_PARAM.test(name) || looksGenerated(value)) ? `${name}=${SET}` : pair;
        })
        .join("&")}`
    : "";
  return `${scheme}${shownHost}${shownPath}${shownQuery}${fragment ? `#${SET}` : ""}`;
}

/** URLs in free text, up to a space or a quote; punctuation that ends a sentence or a clause is not part of them. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** Text (an error message, say) with every URL in it hidden as `redactUrl` hides it. */
export function redactText(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => {
    let url = found.replace(/[.,;:!?\]}]+$/, "");
    // A closing parenthesis is the text's unless the URL opened one, as in "(set)".
    while (url.endsWith(")") && url.split("(").length < url.split(")").length) url = url.slice(0, -1).replace(/[.,;:!?\]}]+$/, "");
    return redactUrl(url) + found.slice(url.length);
  });
}

/**
 * Credentials shorter than this are not searched for in free text: every word holding the
 * letters would be hidden, and such a value is no secret anyway.
 */
const MIN_SECRET_LENGTH = 6;

/** The URLs of a definition, and whether each is a secret whole (a chat webhook). */
function urlsOf(def: OutputDefinition): { url: string; whole: boolean }[] {
  if (def.type === "webhook") return [{ url: def.url, whole: def.preset === "slack" || def.preset === "teams" }];
  if (def.type === "mqtt") return [{ url: def.url, whole: false }];
  if (def.type === "nats") return (Array.isArray(def.servers) ? def.servers : [def.servers]).map((url) => ({ url, whole: false }));
  return [];
}

/** The definition as GET shows it. */
export function redactDefinition(def: OutputDefinition): OutputDefinition {
  const out: Record<string, unknown> = { ...def };
  for (const k of SECRET_FIELDS) if (out[k] !== undefined) out[k] = SET;
  if (out.headers) out.headers = Object.fromEntries(Object.keys(out.headers as object).map((k) => [k, SET]));
  const hide = (url: string) => redactUrl(url, urlsOf(def).find((u) => u.url === url)?.whole);
  if (typeof out.url === "string") out.url = hide(out.url);
  if (typeof out.servers === "string") out.servers = hide(out.servers);
  else if (Array.isArray(out.servers)) out.servers = out.servers.map(hide);
  return out as OutputDefinition;
}

/**
 * Hides a definition's credentials in text about it (errors of its destination): its URLs as
 * GET shows them, the credentials they carry and its secret fields wherever they appear (a
 * client may quote a URL in its own form, or a server echo a path), then any other URL.
 */
export function textRedactor(def: OutputDefinition): (text: string) => string {
  const known = new Map<string, string>();
  const addSecret = (s: string | undefined) => {
    if (s && s.length >= MIN_SECRET_LENGTH && !known.has(s)) known.set(s, SET);
  };
  for (const { url, whole } of urlsOf(def)) {
    known.set(url, redactUrl(url, whole));
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {}
    if (!parsed) continue;
    known.set(parsed.href, redactUrl(parsed.href, whole));
    for (const part of [parsed.username, parsed.password]) {
      addSecret(part);
      addSecret(safeDecode(part));
    }
    for (const [name, value] of parsed.searchParams) if (SECRET_PARAM.test(name) || looksGenerated(value)) addSecret(value);
    if (whole || CHAT_HOSTS.test(parsed.hostname)) addSecret(`${parsed.pathname}${parsed.search}`.replace(/^\/$/, ""));
  }
  const fields = def as unknown as Record<string, unknown>;
  for (const k of SECRET_FIELDS) if (typeof fields[k] === "string") addSecret(fields[k] as string);
  if (def.type === "webhook") for (const v of Object.values(def.headers ?? {})) addSecret(v);
  // Longest first, so a URL is replaced whole before a part of it is.
  const entries = [...known].sort((a, b) => b[0].length - a[0].length);
  return (text) => redactText(entries.reduce((t, [secret, shown]) => t.replaceAll(secret, shown), text));
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * An edited definition (PUT) with the stored credentials put back where the client did not
 * give new ones: a secret field left out or sent as `(set)`, a header sent as `(set)` (or the
 * headers left out), a URL or server sent as GET shows the stored one. `null` removes a
 * secret field or the headers. So a form filled from GET and sent back changes nothing secret.
 */
export function keepSecrets(given: Record<string, unknown>, stored: OutputDefinition): Record<string, unknown> {
  const old = stored as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { ...given };
  const sameType = given.type === stored.type;
  for (const k of SECRET_FIELDS) {
    if (out[k] === null) delete out[k];
    else if ((out[k] === undefined || out[k] === SET) && sameType && typeof old[k] === "string") out[k] = old[k];
  }
  if (out.headers === null) delete out.headers;
  else if (sameType && stored.type === "webhook" && stored.headers) {
    if (out.headers === undefined) out.headers = stored.headers;
    else if (typeof out.headers === "object" && !Array.isArray(out.headers)) {
      out.headers = Object.fromEntries(Object.entries(out.headers as Record<string, unknown>).map(([k, v]) => [k, v === SET && Object.hasOwn(stored.headers!, k) ? stored.headers![k] : v]));
    }
  }
  if (!sameType) return out;
  const shown = redactDefinition(stored) as unknown as Record<string, unknown>;
  if (typeof out.url === "string" && out.url === shown.url) out.url = old.url;
  if (out.servers !== undefined && JSON.stringify(out.servers) === JSON.stringify(shown.servers)) out.servers = old.servers;
  else if (Array.isArray(out.servers) && Array.isArray(shown.servers) && Array.isArray(old.servers)) {
    // Servers kept as GET shows them, others added or removed.
    out.servers = out.servers.map((s) => {
      const i = (shown.servers as unknown[]).indexOf(s);
      return i >= 0 ? (old.servers as unknown[])[i] : s;
    });
  }
  return out;
}

/** The fields of an output schema that hold credentials (for `headers`, its values). */
export function secretFields(properties: Record<string, unknown>): string[] {
  return [...SECRET_FIELDS, "headers"].filter((k) => Object.hasOwn(properties, k));
}
