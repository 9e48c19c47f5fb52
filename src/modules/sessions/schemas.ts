/** Sessions' REST shapes (docs/sessions.md): one schema per shape feeds validation, the types, OpenAPI and the console. */
import { Type } from "@sinclair/typebox";
import { MAX_SESSION_EVENTS } from "../../db/read-limits";
import { EventRecord } from "../../protocol/records";
import { NodeId } from "../../protocol/types";

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(s: T) => Type.Union([s, Type.Null()]);

const exampleSummary = {
  id: 311,
  session: "61cb4b9d22c9",
  node_id: 18446744073709551557n,
  pot_id: "cowrie-01",
  pot_type: "cowrie",
  src_ip: "203.0.113.7",
  start: "2026-11-22T01:07:41.002Z",
  end: "2026-11-22T01:08:12.530Z",
  duration: 31.528,
  events: 14,
  login_success: true,
  username: "root",
  password: "123456",
  commands: 3,
  files: 1,
  recording: true,
  closed: true,
};

export const SessionSummary = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: "Session id in Core (the order sessions were first seen); `GET /api/v1/sessions/{id}`." }),
    session: Type.String({ description: "The honeypot's session id (Cowrie's `session` field)." }),
    node_id: nullable(NodeId),
    pot_id: nullable(Type.String()),
    pot_type: nullable(Type.String()),
    src_ip: nullable(Type.String({ description: "Attacker's address (of the session's first event that has one)." })),
    start: Type.String({ description: "Time of the session's first event, ISO 8601 UTC." }),
    end: Type.String({ description: "Time of its last event so far." }),
    duration: Type.Number({ description: "Seconds from the first event to the last." }),
    events: Type.Integer({ description: "Events of the session." }),
    login_success: Type.Boolean({ description: "A login succeeded (`cowrie.login.success`, or any kind's `<kind>.login.success`)." }),
    username: nullable(Type.String({ description: "Credentials of the first successful login." })),
    password: nullable(Type.String()),
    commands: Type.Integer({ description: "Commands typed (`cowrie.command.input`, `<kind>.command.input`)." }),
    files: Type.Integer({ description: "Files downloaded or uploaded (`<kind>.session.file_download`, `<kind>.session.file_upload`)." }),
    recording: Type.Boolean({ description: "The terminal was recorded (`cowrie.log.closed`); `GET /api/v1/sessions/{id}/recording` serves it once the node has sent it (a session that came to the event socket with no node has none)." }),
    closed: Type.Boolean({ description: "The session has ended (`<kind>.session.closed`)." }),
  },
  { example: exampleSummary },
);
export type SessionSummary = typeof SessionSummary.static;

export const SessionPage = Type.Object(
  {
    sessions: Type.Array(SessionSummary, { description: "Newest first (by when they began)." }),
    next_cursor: nullable(Type.String({ description: "Pass as `cursor` for the next (older) page; null when there is none." })),
  },
  { example: { sessions: [exampleSummary], next_cursor: "311" } },
);

const Credential = Type.Object({ timestamp: Type.String(), username: nullable(Type.String()), password: nullable(Type.String()), success: Type.Boolean() });
const CommandLine = Type.Object({ timestamp: Type.String(), input: Type.String(), found: Type.Boolean({ description: "False when the shell answered that the command was not found (`cowrie.command.failed`)." }) });
const SessionFile = Type.Object({
  timestamp: Type.String(),
  event_type: Type.String({ description: "`<kind>.session.file_download` or `<kind>.session.file_upload` (`cowrie.session.file_download`, `adb.session.file_upload`, ...)." }),
  url: nullable(Type.String()),
  filename: nullable(Type.String()),
  shasum: nullable(Type.String({ description: "SHA-256 of the file, hex." })),
  outfile: nullable(Type.String()),
});
const RecordingInfo = Type.Object({
  size: Type.Integer({ description: "Bytes of the asciicast file." }),
  sha256: Type.String(),
  received: nullable(Type.String({ description: "When Core received it; null while the node has not sent it yet." })),
});

export const SessionDetail = Type.Composite(
  [
    SessionSummary,
    Type.Object({
      credentials: Type.Array(Credential, { description: "Every login attempt, in order." }),
      command_lines: Type.Array(CommandLine, { description: "Every command line typed, in order." }),
      file_events: Type.Array(SessionFile, { description: "Files downloaded and uploaded, in order." }),
      recording_file: nullable(RecordingInfo),
      session_events: Type.Array(EventRecord, { description: `The session's events, oldest first (at most ${MAX_SESSION_EVENTS}).` }),
      truncated: Type.Boolean({ description: `The session has more than ${MAX_SESSION_EVENTS} events; \`session_events\` holds the first ones.` }),
    }),
  ],
  {
    example: {
      ...exampleSummary,
      credentials: [{ timestamp: "2026-11-22T01:07:43.100Z", username: "root", password: "123456", success: true }],
      command_lines: [{ timestamp: "2026-11-22T01:07:45.000Z", input: "uname -a", found: true }],
      file_events: [],
      recording_file: { size: 2048, sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", received: "2026-11-22T01:08:13.000Z" },
      session_events: [],
      truncated: false,
    },
  },
);
export type SessionDetail = typeof SessionDetail.static;
