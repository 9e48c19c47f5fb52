/**
 * Credentials in a request: a login form (urlencoded or JSON body, or the query of a GET as
 * router brute-forcers send it) with a user and a password field, or HTTP Basic
 * authorisation. Field names vary by product (`username`, `luci_username`, `log`, `LoginForm[password]`,
 * `psd`), so a field is named by its last part.
 */
import { header } from "./http-parse.ts";

export interface Credentials {
  username: string;
  password: string;
  /** "form" or "basic". */
  auth: string;
}

const USER = /^(?:.*[_-])?(?:user(?:name)?|login|log|uname|usr|email|e-mail|account|userid|user_id)$/;
const PASS = /^(?:.*[_-])?(?:pass(?:word|wd|w)?|pwd|psd|psw|passphrase)$/;
/** Fields looked at per form: a body with thousands of fields is no login. */
const MAX_FIELDS = 64;

/** The last bracketed part of a field name (`LoginForm[password]` → `password`), lower case. */
function fieldName(raw: string): string {
  const inner = /\[([^\]]*)\]$/.exec(raw);
  return (inner ? inner[1]! : raw).toLowerCase();
}

function fromPairs(pairs: Iterable<[string, string]>): Credentials | null {
  let username: string | null = null;
  let password: string | null = null;
  let n = 0;
  for (const [key, value] of pairs) {
    if (n++ >= MAX_FIELDS) break;
    const name = fieldName(key);
    if (password === null && PASS.test(name)) password = value;
    else if (username === null && USER.test(name)) username = value;
  }
  return password === null ? null : { username: username ?? "", password, auth: "form" };
}

function formPairs(text: string): [string, string][] {
  const out: [string, string][] = [];
  try {
    for (const [k, v] of new URLSearchParams(text)) out.push([k, v]);
  } catch {}
  return out;
}

function jsonPairs(text: string): [string, string][] {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return [];
    return Object.entries(parsed as Record<string, unknown>)
      .filter(([, v]) => typeof v === "string" || typeof v === "number")
      .map(([k, v]) => [k, String(v)]);
  } catch {
    return [];
  }
}

export interface FormInput {
  method: string;
  query: string;
  headers: [string, string][];
  /** The captured body as UTF-8 text. */
  body: string;
}

/** Every credential pair the request carries (at most one form login and one Basic header). */
export function credentials(req: FormInput): Credentials[] {
  const found: Credentials[] = [];
  const contentType = (header(req, "content-type") ?? "").toLowerCase();
  let form: Credentials | null = null;
  if (req.body !== "") {
    if (contentType.includes("json") || /^\s*\{/.test(req.body)) form = fromPairs(jsonPairs(req.body));
    else if (contentType === "" || contentType.startsWith("application/x-www-form-urlencoded") || contentType.startsWith("text/plain")) form = fromPairs(formPairs(req.body));
  }
  if (!form && req.query !== "") form = fromPairs(formPairs(req.query));
  if (form) found.push(form);
  const authz = header(req, "authorization");
  const basic = authz ? /^Basic\s+([A-Za-z0-9+/=]{1,4096})\s*$/i.exec(authz) : null;
  if (basic) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon >= 0) found.push({ username: decoded.slice(0, colon), password: decoded.slice(colon + 1), auth: "basic" });
  }
  return found;
}
