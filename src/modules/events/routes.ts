/**
 * Events: list with filters and a cursor, get one.
 */
import { Elysia, t } from "elysia";
import type { EventFilter, EventRow, StoredEvent } from "../../db/event-queries";
import { HASSH_PATTERN } from "../../db/hassh";
import type { EventReader } from "../../db/stores";
import { stringify, toU64 } from "../../protocol/json";
import { dataJson, recordJson } from "../../core/ingest/record-json";
import { Type } from "@sinclair/typebox";
import type { GeoLookup } from "../../geo";
import { TIME_FORMS } from "../../time";
import type { Ingest } from "../../core/ingest/types";
import { errorResponses, notFound } from "../../core/http/errors";
import { type NodeNames, nodeParam } from "../../core/http/node-ref";
import { noQuery, queryParams } from "../../core/http/query";
import { timeParam } from "../../core/http/time-params";
import { EventRecord, exampleEvent } from "../../protocol/records";

export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 100;

export { EventRecord, GeoRecord } from "../../protocol/records";

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

export const EventPage = t.Object(
  {
    events: t.Array(EventRecord, { description: "Newest first." }),
    next_cursor: nullable(t.String({ description: "Pass as `cursor` for the next (older) page; null when there is none." })),
  },
  { example: { events: [exampleEvent], next_cursor: "1042" } },
);

const EventQuery = queryParams(
  Type.Object({
    node_id: Type.Optional(Type.String({ description: "Only events of this node: its id (unsigned 64-bit integer) or its name (a 400 when no node or several nodes have that name).", example: "18446744073709551557" })),
    pot_id: Type.Optional(Type.String({ description: "Only events of this honeypot.", example: "cowrie-01" })),
    pot_type: Type.Optional(Type.String({ description: "Only events of this kind of honeypot.", example: "cowrie" })),
    event_type: Type.Optional(Type.String({ description: "Only events of this type.", example: "cowrie.login.failed" })),
    src_ip: Type.Optional(Type.String({ description: "Only events from this source address.", example: "203.0.113.7" })),
    hassh: Type.Optional(
      Type.String({
        pattern: HASSH_PATTERN,
        description:
          "Only SSH key exchange events (`cowrie.client.kex`, and any kind's `<kind>.client.kex`) whose `hassh` is this: the HASSH fingerprint of the client's algorithm offer (32 hex digits, any case), as in the stats' `top.hassh`.",
        example: "472b5de333ad665af5cbf10ff892c4df",
      }),
    ),
    country: Type.Optional(Type.String({ pattern: "^[A-Za-z]{2}$", description: "Only events from addresses in this country (ISO 3166-1 alpha-2 code, as in `geo.country`).", example: "CN" })),
    asn: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: "Only events from addresses in this autonomous system (as in `geo.asn`).", example: 4134 })),
    since: Type.Optional(Type.String({ description: `Events at or after this time: ${TIME_FORMS} (before now), as the CLI's --since.`, example: "2026-11-21T00:00:00Z" })),
    until: Type.Optional(Type.String({ description: "Events before this time, in the same forms as `since`.", example: "2026-11-22T00:00:00Z" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE, description: `Page size (1-${MAX_PAGE}).`, example: 100 })),
    cursor: Type.Optional(Type.String({ pattern: "^[0-9]{1,16}$", description: "`next_cursor` of the previous page.", example: "1042" })),
  }),
);

export function toEventRecord(r: EventRow, geo?: GeoLookup | null): EventRecord {
  const rec: EventRecord = { id: r.id, node_id: r.node_id, pot_id: r.pot_id, pot_type: r.pot_type, event_type: r.event_type, timestamp: new Date(r.ts).toISOString(), src_ip: r.src_ip, data: r.data };
  // Looked up at read time (cached per address), like the live feed: the same data the
  // country/ASN filter and counters were built from.
  if (geo && r.src_ip) {
    const g = geo.known(r.src_ip);
    if (g) rec.geo = g;
  }
  return rec;
}

/**
 * A page as JSON text, written from the rows as stored (recordJson): the same text as
 * `stringify` of the EventPage of toEventRecord.
 */
export function eventPageJson(page: { events: StoredEvent[]; nextCursor: number | null }, geo: GeoLookup | null = null): string {
  let out = '{"events":[';
  for (let i = 0; i < page.events.length; i++) {
    const r = page.events[i]!;
    const columns = { id: r.id, nodeId: r.nodeId === null ? null : BigInt(r.nodeId).toString(), potId: r.potId, potType: r.potType, eventType: r.eventType, timestamp: new Date(r.ts).toISOString(), srcIp: r.srcIp };
    // The data knows nothing of private and documentation ranges: no `geo` then.
    out += (i === 0 ? "" : ",") + recordJson(columns, dataJson(r.data), geo && r.srcIp ? geo.known(r.srcIp) : undefined);
  }
  return out + `],"next_cursor":${page.nextCursor === null ? "null" : `"${page.nextCursor}"`}}`;
}

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

/** Pages kept per version of the stored events: the latest page and a few filters dashboards poll. */
const KEPT_PAGES = 32;

/**
 * GET /api/v1/events as a function of the request, for the plugin's route and for createApi's
 * direct routes. Where only this process writes events (the store has `listStored`), a page
 * is the same until the next commit (`ingest.version`): consoles polling the latest page
 * between two commits get the bytes of the first one's answer. Pages with `since` or `until`
 * are not kept: `1h` moves with the clock.
 */
export function eventList(events: EventReader, deps: { ingest: Ingest; geo: GeoLookup | null; nodes?: NodeNames }): (request: Request) => Response | Promise<Response> {
  const listStored = events.listStored?.bind(events);
  if (!listStored) return rowList(events, deps.geo, deps.nodes);
  const version = () => deps.ingest.version;
  const pages = new Map<string, Uint8Array>();
  let at = -1;
  return (request) => {
    const url = request.url;
    const q = url.indexOf("?");
    const key = q < 0 ? "" : url.slice(q + 1);
    const v = version();
    if (v !== at) {
      pages.clear();
      at = v;
    }
    const kept = pages.get(key);
    if (kept !== undefined) return new Response(kept, { headers: JSON_HEADERS });
    const query = EventQuery.parse(url);
    const filter = eventFilter(query, deps.nodes);
    const answer = () => {
      const page = listStored(filter, query.limit ?? DEFAULT_PAGE, query.cursor === undefined ? null : Number(query.cursor));
      const body = new TextEncoder().encode(eventPageJson(page, deps.geo));
      // A node's name is resolved anew each time: nodes register and are renamed between commits.
      if (query.since === undefined && query.until === undefined && (query.node_id === undefined || toU64(query.node_id) !== null) && pages.size < KEPT_PAGES) pages.set(key, body);
      return new Response(body, { headers: JSON_HEADERS });
    };
    // The address table is written with the counters: have every committed event's address in it.
    if (filter.country !== undefined || filter.asn !== undefined) return deps.ingest.countsSettled().then(answer);
    return answer();
  };
}

function eventFilter(query: ReturnType<typeof EventQuery.parse>, nodes?: NodeNames): EventFilter {
  const filter: EventFilter = {
    potId: query.pot_id,
    potType: query.pot_type,
    eventType: query.event_type,
    srcIp: query.src_ip,
    hassh: query.hassh?.toLowerCase(),
    since: timeParam("since", query.since),
    until: timeParam("until", query.until),
    country: query.country?.toUpperCase(),
    asn: query.asn,
  };
  if (query.node_id !== undefined) filter.nodeId = nodeParam(query.node_id, nodes);
  return filter;
}

/**
 * GET /api/v1/events where other instances write too (PostgreSQL, docs/scale-out.md): the page
 * from the store's queries, no page cache (another instance's writer may have committed since).
 * The writers store an address's country and ASN with the batch that brings it, so the
 * filters need no wait.
 */
function rowList(events: EventReader, geo: GeoLookup | null, nodes?: NodeNames): (request: Request) => Promise<Response> {
  return async (request) => {
    const query = EventQuery.parse(request.url);
    const filter = eventFilter(query, nodes);
    const page = await events.list(filter, query.limit ?? DEFAULT_PAGE, query.cursor === undefined ? null : Number(query.cursor));
    const body = stringify({ events: page.events.map((r) => toEventRecord(r, geo)), next_cursor: page.nextCursor === null ? null : String(page.nextCursor) });
    return new Response(body, { headers: JSON_HEADERS });
  };
}

/** The list (`eventList`, also served from Bun's router) and one event. */
export const eventsApi = (deps: { events: EventReader; geo: GeoLookup | null; list: (request: Request) => Response | Promise<Response> }) => {
  const { events, list } = deps;
  return new Elysia({ name: "events" })
    .get(
      "/api/v1/events",
      ({ request }) => list(request),
      {
        response: { 200: EventPage, ...errorResponses({ 400: ["bad_request", 'unknown query parameter "evnt_type"; it takes node_id, pot_id, pot_type, event_type, src_ip, hassh, country, asn, since, until, limit, cursor'] }) },
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
      async ({ params, request }) => {
        noQuery(request.url);
        const id = Number(params.id);
        const row = Number.isSafeInteger(id) ? await events.get(id) : null;
        if (!row) throw notFound(`event ${params.id} does not exist`);
        return toEventRecord(row, deps.geo);
      },
      {
        params: t.Object({ id: t.String({ pattern: "^[0-9]{1,16}$", description: "Event id.", example: "1042" }) }),
        response: { 200: EventRecord, ...errorResponses({ 400: ["bad_request", "invalid request: path parameter id: Expected string to match '^[0-9]{1,16}$'"], 404: ["not_found", "event 1042 does not exist"] }) },
        detail: { tags: ["Events"], summary: "Get one event" },
      },
    );
};
