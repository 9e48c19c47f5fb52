/** The shapes of GET /api/v1/sessions and /api/v1/sessions/{id} (docs/api.md#sessions). */
import type { EventRecord } from "../api";

export interface SessionSummary {
  id: number | string;
  session: string;
  node_id: string | null;
  pot_id: string | null;
  pot_type: string | null;
  src_ip: string | null;
  start: string;
  end: string;
  duration: number;
  events: number | string;
  login_success: boolean;
  username: string | null;
  password: string | null;
  commands: number | string;
  files: number | string;
  recording: boolean;
  closed: boolean;
}

export interface SessionDetail extends SessionSummary {
  credentials: { timestamp: string; username: string | null; password: string | null; success: boolean }[];
  command_lines: { timestamp: string; input: string; found: boolean }[];
  file_events: { timestamp: string; event_type: string; url: string | null; filename: string | null; shasum: string | null; outfile: string | null }[];
  recording_file: { size: number | string; sha256: string; received: string | null } | null;
  session_events: EventRecord[];
  truncated: boolean;
}

export interface SessionPage {
  sessions: SessionSummary[];
  next_cursor: string | null;
}

/** 0.4 s, 42 s, 3 min 5 s, 2 h 1 min. */
export function duration(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return "–";
  if (s < 10) return `${Math.round(s * 10) / 10} s`;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}
