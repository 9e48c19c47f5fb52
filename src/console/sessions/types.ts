/** The shapes of GET /api/v1/sessions and /api/v1/sessions/{id} (docs/api.md#sessions), as the console reads them. */
import type { SessionDetail as SessionDetailOf, SessionPage as SessionPageOf, SessionSummary as SessionSummaryOf } from "../../modules/sessions/schemas";
import type { Wire } from "../api";

export type SessionSummary = Wire<typeof SessionSummaryOf.static>;
export type SessionDetail = Wire<typeof SessionDetailOf.static>;
export type SessionPage = Wire<typeof SessionPageOf.static>;

/** 0.4 s, 42 s, 3 min 5 s, 2 h 1 min. */
export function duration(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return "–";
  if (s < 10) return `${Math.round(s * 10) / 10} s`;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}
