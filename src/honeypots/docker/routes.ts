/**
 * dockerd's routing table, as far as the honeypot answers it: the path with or without the
 * `/v1.NN` prefix, each route with the methods gorilla/mux matches (any other method on a known
 * path is a 404 "page not found" too, since dockerd's MethodNotAllowedHandler is its
 * NotFoundHandler) and what its body is: JSON to read (bounded), an archive to capture, or nothing.
 */
import { compareApi, MIN_API } from "./facts.ts";

export type BodyMode = "json" | "archive" | "none";

export interface Route {
  name: string;
  params: string[];
  body: BodyMode;
}

export interface Target {
  /** The API version the client asked for ("" without a prefix: the daemon's own). */
  version: string;
  path: string;
  query: URLSearchParams;
}

export type Match = { route: Route; target: Target } | { error: "not found" } | { error: "version"; message: string };

const ID = "([^/]+)";
/** Image names hold slashes ("ghcr.io/x/y:1"), so they take the rest of the path. */
const IMAGE = "(.+)";

const TABLE: Array<[string[], RegExp, string, BodyMode]> = [
  [["GET", "HEAD"], /^\/_ping$/, "ping", "none"],
  [["GET"], /^\/version$/, "version", "none"],
  [["GET"], /^\/info$/, "info", "none"],
  [["GET"], /^\/images\/json$/, "images.list", "none"],
  [["POST"], /^\/images\/create$/, "images.create", "none"],
  [["GET"], new RegExp(`^/images/${IMAGE}/json$`), "images.inspect", "none"],
  [["DELETE"], new RegExp(`^/images/${IMAGE}$`), "images.delete", "none"],
  [["POST"], /^\/containers\/create$/, "containers.create", "json"],
  [["GET"], /^\/containers\/json$/, "containers.list", "none"],
  [["GET"], new RegExp(`^/containers/${ID}/json$`), "containers.inspect", "none"],
  [["POST"], new RegExp(`^/containers/${ID}/start$`), "containers.start", "json"],
  [["POST"], new RegExp(`^/containers/${ID}/stop$`), "containers.stop", "none"],
  [["POST"], new RegExp(`^/containers/${ID}/kill$`), "containers.kill", "none"],
  [["POST"], new RegExp(`^/containers/${ID}/restart$`), "containers.restart", "none"],
  [["POST"], new RegExp(`^/containers/${ID}/wait$`), "containers.wait", "none"],
  [["POST"], new RegExp(`^/containers/${ID}/attach$`), "containers.attach", "none"],
  [["POST"], new RegExp(`^/containers/${ID}/resize$`), "containers.resize", "none"],
  [["POST"], new RegExp(`^/containers/${ID}/exec$`), "exec.create", "json"],
  [["GET"], new RegExp(`^/containers/${ID}/logs$`), "containers.logs", "none"],
  [["GET"], new RegExp(`^/containers/${ID}/top$`), "containers.top", "none"],
  [["DELETE"], new RegExp(`^/containers/${ID}$`), "containers.delete", "none"],
  [["HEAD"], new RegExp(`^/containers/${ID}/archive$`), "archive.stat", "none"],
  [["PUT"], new RegExp(`^/containers/${ID}/archive$`), "archive.put", "archive"],
  [["POST"], new RegExp(`^/exec/${ID}/start$`), "exec.start", "json"],
  [["POST"], new RegExp(`^/exec/${ID}/resize$`), "exec.resize", "none"],
  [["GET"], new RegExp(`^/exec/${ID}/json$`), "exec.inspect", "none"],
];

/** Splits "/v1.45/containers/json?all=1" into version, path and query; null for a target that is no path. */
export function parseTarget(target: string): Target | null {
  if (!target.startsWith("/")) return null;
  const q = target.indexOf("?");
  let path = q < 0 ? target : target.slice(0, q);
  let query: URLSearchParams;
  try {
    path = decodeURIComponent(path);
    query = new URLSearchParams(q < 0 ? "" : target.slice(q + 1));
  } catch {
    return null;
  }
  // Go's ServeMux-style cleaning is not applied by gorilla/mux with SkipClean; only the prefix matters.
  const v = /^\/v([0-9.]+)(\/.*)$/.exec(path);
  if (v) return { version: v[1]!, path: v[2]!, query };
  return { version: "", path, query };
}

export function match(method: string, target: string, maxApi: string): Match {
  const t = parseTarget(target);
  if (!t) return { error: "not found" };
  if (method === "OPTIONS") return { route: { name: "options", params: [], body: "none" }, target: t };
  for (const [methods, pattern, name, body] of TABLE) {
    const m = methods.includes(method) ? pattern.exec(t.path) : null;
    if (!m) continue;
    if (t.version !== "") {
      if (!/^\d+\.\d+$/.test(t.version)) return { error: "not found" };
      if (compareApi(t.version, MIN_API) < 0) {
        return { error: "version", message: `client version ${t.version} is too old. Minimum supported API version is ${MIN_API}, please upgrade your client to a newer version` };
      }
      if (compareApi(t.version, maxApi) > 0) return { error: "version", message: `client version ${t.version} is too new. Maximum supported API version is ${maxApi}` };
    }
    return { route: { name, params: m.slice(1), body }, target: t };
  }
  return { error: "not found" };
}

/** Go's strconv.ParseBool as dockerd's BoolValue reads query flags ("1", "true", "True"...). */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const v = (query.get(name) ?? "").trim().toLowerCase();
  return v !== "" && v !== "0" && v !== "false" && v !== "no" && v !== "none";
}
