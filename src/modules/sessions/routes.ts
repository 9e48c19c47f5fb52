/**
 * Sessions: an attacker's connection as one object (docs/sessions.md), built from the events
 * of its `session` id; its terminal recording when the honeypot made one.
 */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { EventRow } from "../../db/event-queries";
import type { GeoLookup } from "../../geo";
import { MAX_SESSION_EVENTS, type SessionFilter, type SessionRow, type SessionStorage } from "../../db/session-queries";
import { SessionDetail, SessionPage, type SessionSummary } from "./schemas";
import type { MaybePromise } from "../../db/stores";
import { TIME_FORMS } from "../../time";
import { type NodeNames, nodeParam } from "../../core/http/node-ref";
import { ErrorBody, errorBody, errorResponses, notFound } from "../../core/http/errors";
import { timeParam } from "../../core/http/time-params";
import { DEFAULT_PAGE, MAX_PAGE, toEventRecord } from "../events";
import { noQuery, queryParams } from "../../core/http/query";


const flag = (description: string) => Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")], { description, example: "true" }));

const SessionQuery = queryParams(
  Type.Object({
    node_id: Type.Optional(Type.String({ description: "Only sessions of this node: its id (unsigned 64-bit integer) or its name (a 400 when no node or several nodes have that name).", example: "18446744073709551557" })),
    pot_id: Type.Optional(Type.String({ description: "Only sessions of this honeypot.", example: "cowrie-01" })),
    pot_type: Type.Optional(Type.String({ description: "Only sessions of this kind of honeypot.", example: "cowrie" })),
    src_ip: Type.Optional(Type.String({ description: "Only sessions from this address.", example: "203.0.113.7" })),
    session: Type.Optional(Type.String({ description: "Only the session with this honeypot session id (Cowrie's `session`).", example: "61cb4b9d22c9" })),
    since: Type.Optional(Type.String({ description: `Sessions with an event at or after this time: ${TIME_FORMS}.`, example: "2026-11-21T00:00:00Z" })),
    until: Type.Optional(Type.String({ description: "Sessions that began before this time, in the same forms as `since`.", example: "2026-11-22T00:00:00Z" })),
    has_commands: flag("`true`: only sessions where commands were typed; `false`: only those without."),
    has_download: flag("`true`: only sessions that downloaded or uploaded a file; `false`: only those without."),
    login_success: flag("`true`: only sessions where a login succeeded; `false`: only those where none did."),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE, description: `Page size (1-${MAX_PAGE}).`, example: 100 })),
    cursor: Type.Optional(Type.String({ pattern: "^[0-9]{1,16}$", description: "`next_cursor` of the previous page.", example: "311" })),
  }),
);

const iso = (ms: number) => new Date(ms).toISOString();

export function toSessionSummary(s: SessionRow): SessionSummary {
  return {
    id: s.id,
    session: s.session,
    node_id: s.node_id,
    pot_id: s.pot_id,
    pot_type: s.pot_type,
    src_ip: s.src_ip,
    start: iso(s.start_ts),
    end: iso(s.end_ts),
    duration: (s.end_ts - s.start_ts) / 1000,
    events: s.events,
    login_success: s.login_success,
    username: s.username,
    password: s.password,
    commands: s.commands,
    files: s.files,
    recording: s.ttylog,
    closed: s.closed,
  };
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * Why a session has no recording to serve. Recordings reach Core only from nodes, on their
 * control channel: a session whose events came straight to the event socket can never have one.
 */
function noRecording(id: number | string, row: SessionRow): string {
  if (!row.ttylog) return `session ${id} has no recording`;
  if (row.node_id === null) return `session ${id} was recorded, but no path for a recording exists: its events came to Core's event socket directly, with no node to send the file (relay the honeypot through a node, with --pot-dir for a Cowrie of your own)`;
  return `session ${id} was recorded, but its node has not sent the recording (yet)`;
}

/** What a session page shows besides its events: logins, commands and files, in order. */
function digest(rows: EventRow[]) {
  const credentials: SessionDetail["credentials"] = [];
  const commandLines: SessionDetail["command_lines"] = [];
  const files: SessionDetail["file_events"] = [];
  for (const e of rows) {
    const d = e.data;
    const timestamp = iso(e.ts);
    // By the end of the name, as sessions are built (db/session-fields.ts): every kind's logins count.
    const type = e.event_type;
    if (type.endsWith(".login.success") || type.endsWith(".login.failed")) {
      credentials.push({ timestamp, username: str(d.username), password: str(d.password), success: type.endsWith(".login.success") });
    } else if (type.endsWith(".command.input")) {
      commandLines.push({ timestamp, input: str(d.input) ?? "", found: true });
    } else if (type.endsWith(".command.failed")) {
      const last = commandLines.findLast((c) => c.input === str(d.input));
      if (last) last.found = false;
    } else if (type.endsWith(".session.file_download") || type.endsWith(".session.file_upload")) {
      files.push({ timestamp, event_type: type, url: str(d.url), filename: str(d.filename), shasum: str(d.shasum), outfile: str(d.outfile) });
    }
  }
  return { credentials, commandLines, files };
}

function sessionId(raw: string): number {
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : -1;
}

const RECORDING_DESCRIPTION =
  "The terminal recording, asciicast v2 (https://docs.asciinema.org/manual/asciicast/v2/): a JSON header line, then one `[seconds, \"o\"|\"i\", text]` line per output or input.";

const idParam = t.Object({ id: t.String({ pattern: "^[0-9]{1,16}$", description: "Session id (Core's, the `id` of the list).", example: "311" }) });

/** Where recordings are read (the stores' recordings). */
export interface RecordingSource {
  get(nodeId: bigint, potId: string, session: string): MaybePromise<{ size: number; sha256: string; data: Buffer; receivedAt: number } | null>;
}

export const sessionsApi = (deps: { sessions: SessionStorage; recordings: RecordingSource; geo?: GeoLookup | null; nodes?: NodeNames }) => {
  const queries = deps.sessions;
  const find = async (raw: string): Promise<SessionRow> => {
    const row = await queries.get(sessionId(raw));
    if (!row) throw notFound(`session ${raw} does not exist`);
    return row;
  };
  const recording = (s: SessionRow) => (s.node_id === null || s.pot_id === null ? null : deps.recordings.get(s.node_id, s.pot_id, s.session));
  return new Elysia({ name: "sessions" })
    .get(
      "/api/v1/sessions",
      async ({ request }) => {
        const q = SessionQuery.parse(request.url);
        const bool = (v: "true" | "false" | undefined) => (v === undefined ? undefined : v === "true");
        const filter: SessionFilter = {
          potId: q.pot_id,
          potType: q.pot_type,
          srcIp: q.src_ip,
          session: q.session,
          since: timeParam("since", q.since),
          until: timeParam("until", q.until),
          hasCommands: bool(q.has_commands),
          hasFiles: bool(q.has_download),
          loginSuccess: bool(q.login_success),
        };
        if (q.node_id !== undefined) filter.nodeId = nodeParam(q.node_id, deps.nodes);
        const page = await queries.list(filter, q.limit ?? DEFAULT_PAGE, q.cursor === undefined ? null : Number(q.cursor));
        return { sessions: page.sessions.map(toSessionSummary), next_cursor: page.nextCursor === null ? null : String(page.nextCursor) };
      },
      {
        response: { 200: SessionPage, ...errorResponses({ 400: ["bad_request", 'query parameter has_commands: Expected union value, got "yes"'] }) },
        detail: {
          parameters: SessionQuery.parameters,
          tags: ["Sessions"],
          summary: "List sessions",
          description:
            "Attack sessions (every event with a `session` field, by node, honeypot and session id; docs/sessions.md), newest first, filtered by any combination " +
            "of the parameters. Follow `next_cursor` until it is null: a filter on the address, the time or the honeypot alone scans a bounded slice per request, " +
            "so a page may hold fewer than `limit` sessions while `next_cursor` is not null.",
        },
      },
    )
    .get(
      "/api/v1/sessions/:id",
      async ({ params, request }) => {
        noQuery(request.url);
        const row = await find(params.id);
        const [rows, rec] = await Promise.all([queries.events(row), recording(row)]);
        const { credentials, commandLines, files } = digest(rows);
        return {
          ...toSessionSummary(row),
          credentials,
          command_lines: commandLines,
          file_events: files,
          recording_file: rec ? { size: rec.size, sha256: rec.sha256, received: iso(rec.receivedAt) } : null,
          session_events: rows.map((r) => toEventRecord(r, deps.geo)),
          truncated: row.events > rows.length && rows.length >= MAX_SESSION_EVENTS,
        } satisfies SessionDetail;
      },
      {
        params: idParam,
        response: { 200: SessionDetail, ...errorResponses({ 404: ["not_found", "session 311 does not exist"] }) },
        detail: { tags: ["Sessions"], summary: "Get one session", description: "The session with its logins, commands, files and events in order (docs/sessions.md)." },
      },
    )
    .get(
      "/api/v1/sessions/:id/recording",
      async ({ params, request }) => {
        noQuery(request.url);
        const row = await find(params.id);
        const rec = await recording(row);
        if (!rec) throw notFound(noRecording(params.id, row));
        return new Response(rec.data, {
          headers: {
            "content-type": "application/x-asciicast",
            "content-disposition": `attachment; filename="session-${row.id}.cast"`,
            "x-content-type-options": "nosniff",
          },
        });
      },
      {
        params: idParam,
        response: { 200: t.String({ description: RECORDING_DESCRIPTION }), ...errorResponses({ 404: ["not_found", "session 311 has no recording"] }) },
        detail: {
          tags: ["Sessions"],
          summary: "Get a session's terminal recording",
          description: "`application/x-asciicast`. Play it with `honeybee session ID --replay` or `asciinema play`.",
          // The file is not JSON: its media type, and the error's, spelt out for OpenAPI.
          responses: {
            200: { description: RECORDING_DESCRIPTION, content: { "application/x-asciicast": { schema: { type: "string" } } } },
            404: { description: "Not Found", content: { "application/json": { schema: ErrorBody, example: errorBody("not_found", "session 311 has no recording") } } },
          },
        },
      },
    );
};
