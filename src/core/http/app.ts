/**
 * The REST API on Elysia: resources as plugins, one error mapping, OpenAPI from the same
 * schemas that validate, and a Swagger UI served from this package (no CDN).
 */
import { databaseUnreachable } from "../../db/pg/unreachable";
import { swagger } from "@elysiajs/swagger";
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Logger } from "../../log";
import { stringify } from "../../protocol/json";
import type { Security } from "../auth";
import { RateLimitedLog } from "../../net/rate-limited-log";
import { ApiError, errorBody } from "./errors";
import { completeOpenApi } from "./openapi";
import { Health, Unhealthy } from "./health";
import { swaggerUi } from "./swagger-ui";

export const API_VERSION = "0.1.0";
// Bytes, not a string: a string body is encoded again for every response.
const HEALTH = new TextEncoder().encode(JSON.stringify({ status: "ok" }));
const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

/** The path of a request URL without building a URL object (this runs for every request). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

/** Paths and the methods they answer, for telling 405 from 404. */
function methodsFor(routes: { method: string; path: string }[], path: string): string[] {
  const out: string[] = [];
  for (const r of routes) {
    const pattern = new RegExp("^" + r.path.replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*") + "$");
    if (pattern.test(path)) out.push(r.method);
  }
  return out;
}

const JSON_BODY = /^\s*application\/json\s*(;|$)/i;

export interface ApiOptions {
  logger: Logger;
  security: Security;
  plugins: Elysia<any, any, any, any, any, any, any>[];
  /** The database file, named in the log line when a query finds it damaged. */
  dbPath?: string;
  /** Bun WebSocket settings for the backend stream. */
  websocket?: { maxPayloadLength: number; backpressureLimit: number };
  /** Why Core cannot do its work right now (events not committed), or null: `/health` says 503. */
  health?: () => string | null;
  /**
   * GET routes that read nothing but the request URL (the lists): path -> the answer. They are
   * also routes of a plugin (for OpenAPI and HEAD); a GET is answered from Bun's router after
   * the same checks, without Elysia's per-request pipeline. An answer may throw an ApiError.
   */
  reads?: Record<string, (request: Request) => Response | Promise<Response>>;
}

/** The SQLite error behind a failure when it says the file is damaged (drivers may wrap it in `cause`). */
function sqliteDamage(error: unknown): Error | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")) return e;
  }
  return null;
}

/** Seconds a client is asked to wait before it tries a read again while the database is away. */
const UNREACHABLE_RETRY_AFTER_S = 5;

/**
 * A streamed body, refused (413) as soon as it passes `limit`: the answer leaves while the client
 * is still sending.
 */
async function readCapped(request: Request, limit: number): Promise<Uint8Array> {
  const reader = request.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    total += r.value.byteLength;
    if (total > limit) {
      reader.cancel().catch(() => {});
      throw new ApiError(413, "payload_too_large", `a body of ${total} bytes or more is over the limit of ${limit} bytes (max_message_bytes)`);
    }
    chunks.push(r.value);
  }
  return Buffer.concat(chunks);
}

export function createApi({ logger, security, plugins, websocket, health, reads = {}, dbPath = "(database)" }: ApiOptions) {
  let damageLoggedAt = -Infinity;
  let unreachableLoggedAt = -Infinity;
  // A flood of refused requests must not become a flood of log lines.
  const refusals = new RateLimitedLog(logger);
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });
  const peer = (request: Request, server: Server<unknown> | null) => server?.requestIP(request)?.address ?? "unknown";
  // Core on loopback with local clients spared and no tokens: nothing asks who the client is.
  const needsAddress = security.needsAddress;

  /**
   * The one place a REST request's principal is established (and rate-limited), before routing:
   * a refusal to send, or null. Runs for every request, so it allocates nothing on the way in.
   */
  const admit = (request: Request, server: Server<unknown> | null, path: string): Response | null => {
    const refusal = security.guard.check(request);
    // Without needsAddress every client is on loopback and authorize only reads the address
    // to decide what it then cannot refuse: Core's own (loopback) host stands in for it.
    const address = refusal === null && !needsAddress ? security.config.host : peer(request, server);
    const websocket = wsPaths.has(path) && request.headers.get("upgrade")?.toLowerCase() === "websocket";
    const outcome = refusal ?? security.authorize(request, path, address, { servesConsole: true, websocket });
    if (outcome.ok) {
      if (security.tokens.enabled) security.principals.set(request, outcome.principal);
      return null;
    }
    refusals.warn(`${address}:${outcome.code}`, { remote: address, method: request.method, path, code: outcome.code }, "request refused");
    const headers: Record<string, string> = {};
    if (outcome.status === 401) headers["www-authenticate"] = 'Bearer realm="honeybee"';
    if ("retryAfter" in outcome && outcome.retryAfter) headers["retry-after"] = String(outcome.retryAfter);
    return json(outcome.status, errorBody(outcome.code, outcome.message), headers);
  };

  const healthAnswer = () => {
    const reason = health?.() ?? null;
    if (reason === null) return new Response(HEALTH, { headers: JSON_HEADERS });
    return json(503, { status: "unhealthy", reason });
  };

  /** What a handler's exception becomes: its ApiError, a damaged database, or an internal error. */
  const failure = (error: unknown, request: Request): Response => {
    if (error instanceof ApiError) return json(error.status, errorBody(error.code, error.message), error.headers);
    const damage = sqliteDamage(error);
    if (damage) {
      // Every request that touches the damaged pages fails alike; one line a minute says it.
      const now = Date.now();
      if (now - damageLoggedAt >= 60_000) {
        damageLoggedAt = now;
        logger.error(
          { err: damage, url: request.url },
          `database file ${dbPath} is damaged (${damage.message}): stop Core, check it with: sqlite3 ${dbPath} "PRAGMA integrity_check", then restore a backup or rescue the data with sqlite3's .recover`,
        );
      }
      return json(500, errorBody("database_corrupt", "the database file is damaged; Core's log says how to check it (PRAGMA integrity_check)"));
    }
    const unreachable = databaseUnreachable(error);
    if (unreachable) {
      // Every read fails alike while the server is away: one line a minute says it.
      const now = Date.now();
      if (now - unreachableLoggedAt >= 60_000) {
        unreachableLoggedAt = now;
        logger.error({ err: unreachable, url: request.url }, `the database is unreachable (${unreachable.message}): reads answer 503 until ${dbPath} answers again`);
      }
      return json(
        503,
        errorBody("database_unavailable", `the PostgreSQL database cannot be reached (${unreachable.message}); try again once it is back`),
        { "retry-after": String(UNREACHABLE_RETRY_AFTER_S) },
      );
    }
    logger.error({ err: error, url: request.url }, "request failed");
    return json(500, errorBody("internal", "internal error; see Core's log"));
  };

  /**
   * A GET answered from Bun's router: the same checks as onRequest, then the answer. Elysia's
   * pipeline (context, hooks, mapResponse) cost a third of a request whose answer is fixed bytes.
   */
  const direct = (answer: (request: Request) => Response | Promise<Response>, path: string) => (request: Request, server: Server<unknown>) => {
    const refused = admit(request, server, path);
    if (refused !== null) return refused;
    try {
      const r = answer(request);
      return r instanceof Promise ? r.catch((e) => failure(e, request)) : r;
    } catch (e) {
      return failure(e, request);
    }
  };
  const directRoutes: Record<string, { GET: (request: Request, server: Server<unknown>) => Response | Promise<Response> }> = {};
  for (const [path, answer] of Object.entries({ "/health": healthAnswer, ...reads })) directRoutes[path] = { GET: direct(answer, path) };

  // Filled in once the app exists; the error handler needs the route table to tell 405 from 404,
  // and authentication the WebSocket routes (the only ones that take a token in the query).
  let routes: { method: string; path: string }[] = [];
  let wsPaths = new Set<string>();
  const app = new Elysia({
    name: "honeybee-api",
    websocket: websocket && { ...websocket, closeOnBackpressureLimit: true },
    // Merged over Elysia's own route table in Bun.serve: these GETs never enter Elysia.
    serve: { routes: directRoutes },
  })
    .onRequest(({ request, server }) => admit(request, server, pathOf(request.url)) ?? undefined)
    // A declared body over the limit never gets here (the guard refuses it unread); a streamed
    // one is measured as it is read (Bun's own cap is far past it, BUN_BODY_CAP), so every 413 has the error shape.
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      if (request.headers.get("content-length") !== null) return;
      const text = new TextDecoder().decode(await readCapped(request, security.config.max_message_bytes));
      if (!JSON_BODY.test(contentType)) return text;
      try {
        return JSON.parse(text);
      } catch {
        throw new ApiError(400, "bad_json", "request body is not valid JSON");
      }
    })
    .onError({ as: "global" }, ({ code, error, request }) => {
      // Checked by class, not by `code`: plugins are separate instances that do not share registered error names.
      if (error instanceof ApiError) return failure(error, request);
      if (code === "NOT_FOUND") {
        const path = new URL(request.url).pathname;
        const allowed: string[] = methodsFor(routes, path).filter((m) => m !== "WS");
        if (allowed.length > 0) {
          return json(405, errorBody("method_not_allowed", `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}`), { allow: allowed.join(", ") });
        }
        return json(404, errorBody("not_found", `no such path: ${request.method} ${path}`));
      }
      if (code === "VALIDATION") {
        // Query strings are checked by ./query.ts; what Elysia validates is a path parameter or the body.
        const { type, all } = error as { type?: string; all?: { path?: string; summary?: string; message?: string }[] };
        const first = all?.[0];
        const where = type === "params" ? "path parameter" : (type ?? "body");
        const detail = first ? `${where}${first.path ? " " + first.path.replace(/^\//, "") : ""}: ${first.summary ?? first.message}` : error.message;
        return json(400, errorBody("bad_request", `invalid request: ${detail}`));
      }
      if (code === "PARSE") {
        // Elysia wraps what the body parser threw (onParse's 413, its bad_json) in a ParseError.
        const cause = (error as { cause?: unknown }).cause;
        if (cause instanceof ApiError) return failure(cause, request);
        return json(400, errorBody("bad_json", "request body is not valid JSON"));
      }
      return failure(error, request);
    })
    // bigint ids must reach the wire as exact integers, which JSON.stringify cannot do.
    .mapResponse({ as: "global" }, ({ response, set, request }) => {
      if (response === null || typeof response !== "object" || response instanceof Response || response instanceof Blob) return;
      if (pathOf(request.url) === "/swagger/json") return json(200, completeOpenApi(response as Record<string, unknown>));
      return json(typeof set.status === "number" ? set.status : 200, response);
    })
    .use(
      swagger({
        path: "/swagger/cdn",
        specPath: "/swagger/json",
        exclude: [/^\/swagger/],
        documentation: {
          info: {
            title: "HoneyBee Core",
            version: API_VERSION,
            description:
              "Backend API of HoneyBee Core, the honeypot management service: the registry of nodes and honeypots, events, statistics and node commands. " +
              "Node ids are unsigned 64-bit integers and are written as exact JSON integers. Errors have the shape `{\"error\":{\"code\",\"message\"}}`. " +
              "Every operation refuses, before anything else: a Host header that is not Core's (421 `misdirected_request`; see `allowed_hosts`), a browser Origin " +
              "that is not Core's own on a WebSocket or a state-changing request (403 `forbidden_origin`; see `allowed_origins`), a request body that is not " +
              "`application/json` (415 `unsupported_media_type`), a body over `max_message_bytes` (413 `payload_too_large`, before or while it streams in), and a query parameter it does not take (400). " +
              "An operation that needs a PostgreSQL database that cannot be reached answers 503 `database_unavailable` with `Retry-After`. " +
              "A token goes in `Authorization: Bearer`; `?token=` is accepted on WebSocket upgrades only.",
          },
          tags: [
            { name: "Health", description: "Liveness" },
            { name: "Nodes", description: "Registered nodes" },
            { name: "Honeypots", description: "Honeypots across all nodes" },
            { name: "Events", description: "Events recorded by honeypots" },
            { name: "Sessions", description: "Attack sessions: an attacker's connection with its logins, commands, files and terminal recording" },
            { name: "Stats", description: "Counts and top values" },
            { name: "Commands", description: "Node commands: install and manage honeypots" },
            { name: "Catalogue", description: "Honeypot kinds a node can install" },
            { name: "Outputs", description: "Where events and alerts are shipped (docs/outputs.md)" },
            { name: "Rules", description: "Alert rules (docs/outputs.md)" },
            { name: "Indicators", description: "Attackers' addresses, credentials, URLs and file hashes for threat-intelligence tools and firewalls" },
            { name: "Metrics", description: "Prometheus metrics" },
            { name: "Artifacts", description: "Files attackers downloaded or uploaded, by SHA-256; downloads only as zips encrypted with `infected`" },
          ],
          components: {
            securitySchemes: {
              bearerAuth: { type: "http", scheme: "bearer", description: "An API token (role read or operator). Needed only when Core has tokens configured." },
            },
          },
          security: [{ bearerAuth: [] }],
        },
      }),
    )
    .use(swaggerUi())
    // The same bytes every time while healthy: a health probe should cost next to nothing.
    .get(
      "/health",
      healthAnswer,
      {
        response: { 200: Health, 503: Unhealthy },
        detail: {
          tags: ["Health"],
          summary: "Check that Core is running and committing events",
          description:
            "200 `{\"status\":\"ok\"}` while Core works. 503 `{\"status\":\"unhealthy\",\"reason\"}` while received events cannot be committed (the database cannot be written, the event writer thread died), have waited `commit_stall_ms` (30 s) with no commit (a writer or bus that hangs rather than fails), or the write-ahead log is not being checkpointed; it turns healthy again by itself once writing works.",
        },
      },
    );
  for (const p of plugins) app.use(p);
  routes = app.routes;
  wsPaths = new Set(routes.filter((r) => r.method === "WS").map((r) => r.path));
  return app;
}
