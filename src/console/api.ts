/**
 * Talking to Core's REST API from the console: same origin, the token from sessionStorage,
 * node ids kept exact (they are u64, above 2^53: read as strings), errors in Core's shape.
 */
import type { WhoAmI } from "../core/auth/schemas";
import type { CatalogueKind as CatalogueKindOf } from "../modules/catalogue/schemas";
import type { NodeDetail as NodeDetailOf, NodeSummary as NodeSummaryOf } from "../modules/nodes/schemas";
import type { HoneypotInNode } from "../modules/pots/schemas";
import type { Stats as StatsOf } from "../modules/stats/schemas";
import type { CommandRecord as CommandRecordOf, EventRecord as EventRecordOf } from "../protocol/records";
const TOKEN_KEY = "honeybee.token";

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (t: string) => sessionStorage.setItem(TOKEN_KEY, t),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Called when Core says the token is missing or wrong: the app shows the sign-in page. */
export const authListeners = new Set<() => void>();

/** u64 node ids as strings: `"node_id":18446744073709551557` -> `"node_id":"18446744073709551557"`. */
export function parseJson<T = any>(text: string): T {
  return JSON.parse(text.replace(/"node_id":(\d+)/g, '"node_id":"$1"'));
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const t = token.get();
  if (t) headers.authorization = `Bearer ${t}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = parseJson(text);
  } catch {}
  if (!res.ok) {
    const err = parsed?.error;
    if (res.status === 401) for (const l of authListeners) l();
    throw new ApiError(res.status, err?.code ?? "http_" + res.status, err?.message ?? `${method} ${path}: HTTP ${res.status}`);
  }
  return parsed as T;
}

export const get = <T = any>(path: string) => request<T>("GET", path);

/** A non-JSON body (a terminal recording) with the token; errors as for JSON. */
export async function getText(path: string): Promise<string> {
  const t = token.get();
  const res = await fetch(path, { headers: t ? { authorization: `Bearer ${t}` } : {} });
  const text = await res.text();
  if (res.ok) return text;
  let err: any = null;
  try {
    err = JSON.parse(text)?.error;
  } catch {}
  if (res.status === 401) for (const l of authListeners) l();
  throw new ApiError(res.status, err?.code ?? "http_" + res.status, err?.message ?? `GET ${path}: HTTP ${res.status}`);
}
export const post = <T = any>(path: string, body: unknown) => request<T>("POST", path, body);
export const put = <T = any>(path: string, body: unknown) => request<T>("PUT", path, body);
export const del = <T = any>(path: string) => request<T>("DELETE", path);

/** A query string from the set fields of an object. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? "?" + s : "";
}

/**
 * Whether this Core has an endpoint: 404 (no such path) and 405 mean it does not. Pages for
 * APIs that are newer than some Cores use it to show "not available on this Core" instead of
 * an error.
 */
export async function probe(path: string): Promise<boolean> {
  try {
    await get(path);
    return true;
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405) && /^(not_found|method_not_allowed)$/.test(e.code) && /no such path|not allowed/.test(e.message)) return false;
    throw e;
  }
}

/**
 * What Core sends, as the console reads it: the schemas the routes answer with (one per shape,
 * in each feature's schemas.ts), with exact u64 ids as the strings the console keeps them as.
 */
export type Wire<T> = T extends bigint ? string : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;

export type Me = Wire<typeof WhoAmI.static>;
export type EventRecord = Wire<EventRecordOf>;
export type NodeSummary = Wire<typeof NodeSummaryOf.static>;
export type NodeDetail = Wire<typeof NodeDetailOf.static>;
/** A pot on a node's page, or in the list of every node's pots (with its node). */
export type Pot = Wire<typeof HoneypotInNode.static> & { node_id?: string };
export type Stats = Wire<typeof StatsOf.static>;
/** An entry of any of the stats' top lists (the ASNs' with the AS's name). */
export type TopEntry = Stats["top"]["src_ips"][number] & { as_org?: string | null };
export type CommandRecord = Wire<CommandRecordOf>;
export type CatalogueKind = Wire<typeof CatalogueKindOf.static>;
