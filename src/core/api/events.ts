/**
 * Events: list with filters and a cursor, get one. Stats are mounted from here too
 * (stats.ts), so the app wiring needs one plugin for the event pipeline's REST side.
 */
import { Elysia, t } from "elysia";
import type { Db } from "../../db";
import { EventQueries, type EventFilter, type EventRow } from "../../db/event-store";
import { toU64 } from "../../protocol/json";
import { NodeId } from "../../protocol/types";
import { Type } from "@sinclair/typebox";
import { TIME_FORMS, parseTimeArg } from "../../time";
import type { Ingest } from "../ingest/types";
import { badRequest, errorResponses, notFound } from "./errors";
import { noQuery, queryParams } from "./query";
import { statsApi, type Stats } from "./stats";

export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 100;

const exampleEvent = {
  id: 1042,
  node_id: 18446744073709551557n,
  pot_id: "cowrie-01",
  pot_type: "cowrie",
  event_type: "cowrie.login.failed",
  timestamp: "2026-11-22T01:07:42.010Z",
  src_ip: "203.0.113.7",
  data: { session: "61cb4b9d22c9", username: "admin", password: "wrongpw", protocol: "ssh", message: "login attempt [admin/wrongpw] failed" },
};

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

export const EventRecord = t.Object(
  {
    id: t.Integer({ minimum: 1, description: "Event id: the order Core committed events in." }),
    node_id: nullable(NodeId),
    pot_id: nullable(t.String({ description: "Honeypot that produced the event." })),
    pot_type: nullable(t.String({ description: "Kind of honeypot (`cowrie`, `honnypotter`, ...)." })),
    event_type: t.String({ description: "Event type, e.g. `cowrie.login.failed` (also when a node sent it as a PotLog); `log.<type>` for a PotLog of a process's output (`log.stderr`), `node.<event>` for NodeEvent." }),
    timestamp: t.String({ description: "Event time, ISO 8601 UTC (the receive time when the event had none)." }),
    src_ip: nullable(t.String({ description: "Attacker's address." })),
    data: t.Record(t.String(), t.Any(), { description: "Every field of the event that is not one of the columns above." }),
  },
  { example: exampleEvent },
);
export type EventRecord = typeof EventRecord.static;

export const EventPage = t.Object(
  {
    events: t.Array(EventRecord, { description: "Newest first." }),
    next_cursor: nullable(t.String({ description: "Pass as `cursor` for the next (older) page; null when there is none." })),
  },
  { example: { events: [exampleEvent], next_cursor: "1042" } },
);

const EventQuery = queryParams(
  Type.Object({
    node_id: Type.Optional(Type.String({ description: "Only events of this node (unsigned 64-bit integer).", example: "18446744073709551557" })),
    pot_id: Type.Optional(Type.String({ description: "Only events of this honeypot.", example: "cowrie-01" })),
    pot_type: Type.Optional(Type.String({ description: "Only events of this kind of honeypot.", example: "cowrie" })),
    event_type: Type.Optional(Type.String({ description: "Only events of this type.", example: "cowrie.login.failed" })),
    src_ip: Type.Optional(Type.String({ description: "Only events from this source address.", example: "203.0.113.7" })),
    since: Type.Optional(Type.String({ description: `Events at or after this time: ${TIME_FORMS} (before now), as the CLI's --since.`, example: "2026-11-21T00:00:00Z" })),
    until: Type.Optional(Type.String({ description: "Events before this time, in the same forms as `since`.", example: "2026-11-22T00:00:00Z" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE, description: `Page size (1-${MAX_PAGE}).`, example: 100 })),
    cursor: Type.Optional(Type.String({ pattern: "^[0-9]{1,16}$", description: "`next_cursor` of the previous page.", example: "1042" })),
  }),
);

export function timeParam(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseTimeArg(raw);
  if (ms === null) throw badRequest(`query parameter ${name} must be ${TIME_FORMS}; got ${JSON.stringify(raw)}`);
  return ms;
}

export function toEventRecord(r: EventRow): EventRecord {
  return { id: r.id, node_id: r.node_id, pot_id: r.pot_id, pot_type: r.pot_type, event_type: r.event_type, timestamp: new Date(r.ts).toISOString(), src_ip: r.src_ip, data: r.data };
}

export const eventsApi = (deps: { db: Db; ingest: Ingest; security: () => Stats["security"] }) => {
  const queries = new EventQueries(deps.db);
  return new Elysia({ name: "events" })
    .get(
      "/api/v1/events",
      ({ request }) => {
        const query = EventQuery.parse(request.url);
        const filter: EventFilter = {
          potId: query.pot_id,
          potType: query.pot_type,
          eventType: query.event_type,
          srcIp: query.src_ip,
          since: timeParam("since", query.since),
          until: timeParam("until", query.until),
        };
        if (query.node_id !== undefined) {
          const id = toU64(query.node_id);
          if (id === null) throw badRequest(`query parameter node_id must be an unsigned 64-bit integer, got ${JSON.stringify(query.node_id)}`);
          filter.nodeId = id;
        }
        const page = queries.list(filter, query.limit ?? DEFAULT_PAGE, query.cursor === undefined ? null : Number(query.cursor));
        return { events: page.events.map(toEventRecord), next_cursor: page.nextCursor === null ? null : String(page.nextCursor) };
      },
      {
        response: { 200: EventPage, ...errorResponses({ 400: ["bad_request", 'unknown query parameter "evnt_type"; it takes node_id, pot_id, pot_type, event_type, src_ip, since, until, limit, cursor'] }) },
        detail: {
          parameters: EventQuery.parameters,
          tags: ["Events"],
          summary: "List events",
          description:
            "Stored events, newest first, filtered by any combination of the parameters. Pages are stable under concurrent ingestion: " +
            "follow `next_cursor` until it is null and no event is skipped or repeated. A page may hold fewer than `limit` events " +
            "(a rare filter over a long history is scanned a bounded slice per request) while `next_cursor` is not null.",
        },
      },
    )
    .get(
      "/api/v1/events/:id",
      ({ params, request }) => {
        noQuery(request.url);
        const id = Number(params.id);
        const row = Number.isSafeInteger(id) ? queries.get(id) : null;
        if (!row) throw notFound(`event ${params.id} does not exist`);
        return toEventRecord(row);
      },
      {
        params: t.Object({ id: t.String({ pattern: "^[0-9]{1,16}$", description: "Event id.", example: "1042" }) }),
        response: { 200: EventRecord, ...errorResponses({ 400: ["bad_request", "invalid request: path parameter id: Expected string to match '^[0-9]{1,16}$'"], 404: ["not_found", "event 1042 does not exist"] }) },
        detail: { tags: ["Events"], summary: "Get one event" },
      },
    )
    .use(statsApi({ queries, ingest: deps.ingest, security: deps.security }));
};
