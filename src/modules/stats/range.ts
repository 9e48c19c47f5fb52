/**
 * The time range and the node/pot/kind filter the stats take, read alike by `GET /api/v1/stats`,
 * its timeline and its field top lists: a `window` of minutes, hours or days back from now, or
 * `from`/`to` in the time forms `since`/`until` take elsewhere; `node_id` (id or name),
 * `pot_id`, `pot_type`.
 */
import { Type } from "@sinclair/typebox";
import { badRequest } from "../../core/http/errors";
import { type NodeNames, nodeParam } from "../../core/http/node-ref";
import { MAX_RANGE_DAYS, MAX_RANGE_MS, parseWindow, timeParam } from "../../core/http/time-params";
import type { SourceFilter, StatsRange } from "../../db/stats-range";
import { TIME_FORMS } from "../../time";


/** The query parameters of a range and a filter, with the window's default. */
export function rangeParams(defaultWindow: string) {
  return {
    window: Type.Optional(
      Type.String({ description: `How far back from now: minutes, hours or days, e.g. \`15m\`, \`1h\`, \`24h\`, \`7d\`, \`30d\` (at most ${MAX_RANGE_DAYS}d). Not with \`from\`/\`to\`.`, default: defaultWindow, example: defaultWindow }),
    ),
    from: Type.Optional(Type.String({ description: `Start of the range (inclusive): ${TIME_FORMS}. Not with \`window\`.`, example: "2026-11-20T00:00:00Z" })),
    to: Type.Optional(Type.String({ description: "End of the range (exclusive), in the forms `from` takes; default now. Only with `from`.", example: "2026-11-21T00:00:00Z" })),
    node_id: Type.Optional(Type.String({ description: "Only events of this node: its id (unsigned 64-bit integer) or its name (a 400 when no node or several nodes have that name).", example: "edge-1" })),
    pot_id: Type.Optional(Type.String({ description: "Only events of this honeypot.", example: "cowrie-01" })),
    pot_type: Type.Optional(Type.String({ description: "Only events of this kind of honeypot.", example: "cowrie" })),
  };
}

export interface AskedRange {
  range: StatsRange;
  /** What was asked: the window, or `custom` for from/to. */
  label: string;
  /** The window's length when a window was asked. */
  windowMs: number | null;
}

/** The range of a request: `window` (default `defaultWindow`) back from `now`, or `from`/`to`. */
export function askedRange(q: { window?: string; from?: string; to?: string }, defaultWindow: string, now = Date.now()): AskedRange {
  if (q.window !== undefined && (q.from !== undefined || q.to !== undefined)) throw badRequest("give either window or from/to, not both");
  if (q.from === undefined) {
    if (q.to !== undefined) throw badRequest("query parameter to needs from (or give a window instead)");
    const label = q.window ?? defaultWindow;
    const ms = parseWindow(label);
    return { range: { from: now - ms, to: now }, label, windowMs: ms };
  }
  const from = timeParam("from", q.from)!;
  const to = timeParam("to", q.to) ?? now;
  if (from >= to) throw badRequest(`from must be before to (from ${new Date(from).toISOString()}, to ${new Date(to).toISOString()})`);
  if (to - from > MAX_RANGE_MS) throw badRequest(`from/to spans more than ${MAX_RANGE_DAYS} days`);
  return { range: { from, to }, label: "custom", windowMs: null };
}

/** The node/pot/kind filter of a request. */
export function sourceFilter(q: { node_id?: string; pot_id?: string; pot_type?: string }, nodes?: NodeNames): SourceFilter {
  const f: SourceFilter = {};
  if (q.node_id !== undefined) f.nodeId = nodeParam(q.node_id, nodes);
  if (q.pot_id !== undefined) f.potId = q.pot_id;
  if (q.pot_type !== undefined) f.potType = q.pot_type;
  return f;
}
