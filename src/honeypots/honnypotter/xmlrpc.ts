/**
 * xmlrpc.php as WordPress answers brute-force tools: every call that carries credentials fails with
 * fault 403 and is reported as an attempt, `system.multicall` included (one request, hundreds of
 * guesses); unknown methods and malformed XML get IXR's own faults. A DOCTYPE is refused, as
 * WordPress' IXR parser refuses it, so entity tricks go nowhere.
 */

export type XmlRpcValue = string | number | boolean | null | XmlRpcValue[] | { [key: string]: XmlRpcValue };

export interface XmlRpcAttempt {
  method: string;
  username: string;
  password: string;
}

export interface XmlRpcReply {
  status: number;
  contentType: string;
  body: string;
  attempts: XmlRpcAttempt[];
}

interface Element {
  name: string;
  children: Element[];
  text: string;
}

const MAX_DEPTH = 64;
/** Calls looked at in one system.multicall; the rest get the same fault without an event each. */
const MAX_MULTICALL = 500;

/** Where the username sits in each method's parameters; the password follows it. */
const CREDENTIAL_INDEX: Record<string, number> = {
  "wp.getUsersBlogs": 0,
  "blogger.getUsersBlogs": 1,
  "blogger.getUserInfo": 1,
  "metaWeblog.getUsersBlogs": 1,
  "metaWeblog.getRecentPosts": 1,
  "metaWeblog.newPost": 1,
  "metaWeblog.editPost": 1,
  "metaWeblog.getPost": 1,
  "metaWeblog.newMediaObject": 1,
  "wp.getProfile": 1,
  "wp.getUsers": 1,
  "wp.getUser": 1,
  "wp.getPosts": 1,
  "wp.getPost": 1,
  "wp.newPost": 1,
  "wp.editPost": 1,
  "wp.deletePost": 1,
  "wp.getPages": 1,
  "wp.getOptions": 1,
  "wp.setOptions": 1,
  "wp.getCategories": 1,
  "wp.getTags": 1,
  "wp.getComments": 1,
  "wp.getMediaLibrary": 1,
  "wp.uploadFile": 1,
  "wp.getAuthors": 1,
  "wp.getPostTypes": 1,
};

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decodeText(text: string): string | null {
  let bad = false;
  const out = text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);|&/g, (all, name: string | undefined) => {
    if (!name) {
      bad = true;
      return all;
    }
    if (name.startsWith("#")) {
      const code = name[1] === "x" ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      if (code > 0x10ffff) bad = true;
      return bad ? "" : String.fromCodePoint(code);
    }
    if (!(name in ENTITIES)) bad = true;
    return ENTITIES[name] ?? "";
  });
  return bad ? null : out;
}

/** A strict little XML reader: elements and text only, well-formed or nothing. */
export function parseXml(source: string): Element | null {
  const root: Element = { name: "#document", children: [], text: "" };
  const stack = [root];
  let i = 0;
  while (i < source.length) {
    // The root is never popped (a close tag needs two entries), so the stack has a top.
    const top = stack[stack.length - 1]!;
    const lt = source.indexOf("<", i);
    const text = source.slice(i, lt === -1 ? source.length : lt);
    if (text) {
      const decoded = decodeText(text);
      if (decoded === null || (top === root && decoded.trim() !== "")) return null;
      top.text += decoded;
    }
    if (lt === -1) break;
    const past = (close: string) => {
      const at = source.indexOf(close, lt);
      return at === -1 ? -1 : at + close.length;
    };
    let end: number;
    if (source.startsWith("<?", lt)) end = past("?>");
    else if (source.startsWith("<!--", lt)) end = past("-->");
    else if (source.startsWith("<![CDATA[", lt)) {
      const close = source.indexOf("]]>", lt);
      if (close === -1) return null;
      top.text += source.slice(lt + 9, close);
      end = close + 3;
    } else if (source.startsWith("<!", lt)) return null;
    else {
      const gt = source.indexOf(">", lt);
      if (gt === -1) return null;
      const tag = source.slice(lt + 1, gt);
      if (tag.startsWith("/")) {
        if (stack.length < 2 || top.name !== tag.slice(1).trim()) return null;
        stack.pop();
      } else {
        const name = /^[A-Za-z_][\w.:-]*/.exec(tag)?.[0];
        if (!name || stack.length > MAX_DEPTH) return null;
        const element: Element = { name, children: [], text: "" };
        top.children.push(element);
        if (!tag.endsWith("/")) stack.push(element);
      }
      end = gt + 1;
    }
    if (end === -1) return null;
    i = end;
  }
  return stack.length === 1 && root.children.length === 1 ? root.children[0]! : null;
}

function child(el: Element | undefined, name: string): Element | undefined {
  return el?.children.find((c) => c.name === name);
}

function value(el: Element | undefined): XmlRpcValue {
  if (!el) return null;
  const typed = el.children[0];
  if (!typed) return el.text.trim();
  switch (typed.name) {
    case "int":
    case "i4":
    case "i8":
      return Number.parseInt(typed.text.trim(), 10) || 0;
    case "double":
      return Number.parseFloat(typed.text.trim()) || 0;
    case "boolean":
      return typed.text.trim() === "1";
    case "base64":
      return Buffer.from(typed.text.trim(), "base64").toString("utf8");
    case "nil":
      return null;
    case "array":
      return (child(typed, "data")?.children ?? []).filter((c) => c.name === "value").map(value);
    case "struct": {
      const out: Record<string, XmlRpcValue> = {};
      for (const member of typed.children.filter((c) => c.name === "member")) {
        out[child(member, "name")?.text.trim() ?? ""] = value(child(member, "value"));
      }
      return out;
    }
    default:
      return typed.text;
  }
}

export function parseMethodCall(xml: string): { method: string; params: XmlRpcValue[] } | null {
  const doc = parseXml(xml);
  if (doc?.name !== "methodCall") return null;
  const method = child(doc, "methodName")?.text.trim();
  if (!method) return null;
  const params = (child(doc, "params")?.children ?? []).filter((p) => p.name === "param").map((p) => value(child(p, "value")));
  return { method, params };
}

function xmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#039;" })[c] as string);
}

function valueXml(v: XmlRpcValue): string {
  if (typeof v === "number") return `<int>${v}</int>`;
  if (typeof v === "boolean") return `<boolean>${v ? 1 : 0}</boolean>`;
  if (Array.isArray(v)) return `<array><data>\n${v.map((item) => `  <value>${valueXml(item)}</value>\n`).join("")}</data></array>`;
  if (v && typeof v === "object") {
    return `<struct>\n${Object.entries(v).map(([k, item]) => `  <member><name>${xmlEscape(k)}</name><value>${valueXml(item)}</value></member>\n`).join("")}</struct>`;
  }
  return `<string>${xmlEscape(v ?? "")}</string>`;
}

class Fault {
  constructor(
    readonly code: number,
    readonly message: string,
  ) {}

  struct(): XmlRpcValue {
    return { faultCode: this.code, faultString: this.message };
  }
}

function document(inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${inner}`;
}

function faultXml(fault: Fault): string {
  return document(
    `<methodResponse>\n  <fault>\n    <value>\n      <struct>\n        <member>\n          <name>faultCode</name>\n          <value><int>${fault.code}</int></value>\n        </member>\n        <member>\n          <name>faultString</name>\n          <value><string>${xmlEscape(fault.message)}</string></value>\n        </member>\n      </struct>\n    </value>\n  </fault>\n</methodResponse>\n`,
  );
}

function successXml(v: XmlRpcValue): string {
  return document(`<methodResponse>\n  <params>\n    <param>\n      <value>\n      ${valueXml(v)}\n      </value>\n    </param>\n  </params>\n</methodResponse>\n`);
}

const text = (v: XmlRpcValue | undefined): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

function call(method: string, params: XmlRpcValue[], attempts: XmlRpcAttempt[]): XmlRpcValue | Fault {
  // hasOwn keeps a method named after an Object.prototype member ("constructor") out.
  const at = Object.hasOwn(CREDENTIAL_INDEX, method) ? CREDENTIAL_INDEX[method] : undefined;
  if (at !== undefined) {
    attempts.push({ method, username: text(params[at]), password: text(params[at + 1]) });
    return new Fault(403, "Incorrect username or password.");
  }
  if (method === "system.listMethods") return ["system.multicall", "system.listMethods", "system.getCapabilities", "demo.addTwoNumbers", "demo.sayHello", "pingback.extensions.getPingbacks", "pingback.ping", ...Object.keys(CREDENTIAL_INDEX)];
  if (method === "demo.sayHello") return "Hello!";
  if (method === "pingback.ping") return new Fault(0, "");
  return new Fault(-32601, `server error. requested method ${method} does not exist.`);
}

export function handleXmlRpc(body: string): XmlRpcReply {
  const attempts: XmlRpcAttempt[] = [];
  const xml = (inner: string) => ({ status: 200, contentType: "text/xml; charset=UTF-8", body: inner, attempts });
  if (body.trim() === "") {
    return { status: 405, contentType: "text/plain;charset=UTF-8", body: "XML-RPC server accepts POST requests only.", attempts };
  }
  const parsed = parseMethodCall(body);
  if (!parsed) return xml(faultXml(new Fault(-32700, "parse error. not well formed")));
  if (parsed.method !== "system.multicall") {
    const result = call(parsed.method, parsed.params, attempts);
    return xml(result instanceof Fault ? faultXml(result) : successXml(result));
  }
  const calls = Array.isArray(parsed.params[0]) ? parsed.params[0] : [];
  const results = calls.map((c, i): XmlRpcValue => {
    const entry = c && typeof c === "object" && !Array.isArray(c) ? c : {};
    const method = text(entry.methodName);
    const params = Array.isArray(entry.params) ? entry.params : [];
    if (method === "system.multicall") return new Fault(-32600, "Recursive calls to system.multicall are forbidden").struct();
    const result = i < MAX_MULTICALL ? call(method, params, attempts) : new Fault(403, "Incorrect username or password.");
    return result instanceof Fault ? result.struct() : [result];
  });
  return xml(successXml(results));
}
