/**
 * Stats: totals, the ingest counters, and top source IPs, usernames, passwords, event types,
 * countries, ASNs, commands and SSH client fingerprints (HASSH) over a time range, of a node,
 * pot or kind if asked. Without a filter the top lists come from hourly counters (see the
 * `event_counts` table), so they count the whole hours the range reaches into; the range's
 * event count is exact (db/stats-range.ts). The writer keeps the counters of recent batches in
 * memory for `stats_flush_ms`; a read has them written first, so it counts every event that
 * `GET /api/v1/events` shows.
 */
import { Elysia } from "elysia";
import type { AddressStorage } from "../../db/address-store";
import type { TopEntry } from "../../db/read-limits";
import { Stats } from "./schemas";
import type { EventReader } from "../../db/stores";
import type { GeoLookup } from "../../geo";
import type { Ingest, IngestCounters } from "../../core/ingest/types";
import { Type } from "@sinclair/typebox";
import { errorResponses } from "../../core/http/errors";
import { queryParams } from "../../core/http/query";
import type { NodeNames } from "../../core/http/node-ref";
import { askedRange, rangeParams, sourceFilter } from "./range";
import { CREDENTIAL_PAIR, isLoginType } from "../../db/stats-range";


const StatsQuery = queryParams(
  Type.Object({
    ...rangeParams("24h"),
    top: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: "Entries per top list.", example: 10 })),
  }),
);

const NO_RULES: Stats["rules"] = { state: "stopped", position: 0, lag: 0, delivered: 0, failed: 0, dropped: 0, last_error: null, last_delivery_at: null, alerts: 0, suppressed: {} };

export interface OutputsStats {
  outputs: () => Stats["outputs"];
  rules: () => Stats["rules"];
}


async function withOrgs(addresses: AddressStorage, top: TopEntry[]): Promise<NonNullable<Stats["top"]["asns"]>> {
  const orgs = await addresses.asOrgs(top.map((e) => Number(e.value)));
  return top.map((e) => ({ value: e.value, as_org: orgs.get(Number(e.value)) ?? null, count: e.count }));
}

export const statsApi = (deps: {
  queries: EventReader;
  addresses: AddressStorage;
  ingest: Ingest;
  counters?: () => IngestCounters;
  security: () => Stats["security"];
  geo: GeoLookup | null;
  outputs?: OutputsStats;
  nodes?: NodeNames;
}) =>
  new Elysia({ name: "stats" }).get(
    "/api/v1/stats",
    async ({ request }) => {
      const query = StatsQuery.parse(request.url);
      const asked = askedRange(query, "24h");
      const filter = sourceFilter(query, deps.nodes);
      await deps.ingest.countsSettled();
      const top = query.top ?? 10;
      const { range } = asked;
      const s = await deps.queries.statsOver({ range, top, filter });
      const [asns, commands, credentials] = await Promise.all([
        withOrgs(deps.addresses, s.top.asn),
        s.commands ?? deps.queries.topCommands(range.from, top, range.to),
        s.credentials ?? deps.queries.topField({ since: range.from, until: range.to, eventTypeMatch: isLoginType }, CREDENTIAL_PAIR, top).then((t) => t.values),
      ]);
      const { received, committed, rejected, connections, pending, duplicates, unreadable_timestamps } = deps.counters?.() ?? deps.ingest.counters;
      const iso = (ms: number) => new Date(ms).toISOString();
      return {
        total_events: s.totalEvents,
        window: asked.label,
        window_start: iso(range.from),
        window_end: iso(range.to),
        window_events: s.windowEvents,
        top_start: iso(s.topStart),
        top_end: iso(s.topEnd),
        sampled: s.sampled,
        ingest: { received, committed, rejected, connections, pending, duplicates, unreadable_timestamps },
        security: deps.security(),
        outputs: deps.outputs?.outputs() ?? [],
        rules: deps.outputs?.rules() ?? NO_RULES,
        top: {
          src_ips: s.top.src_ip,
          usernames: s.top.username,
          passwords: s.top.password,
          event_types: s.top.event_type,
          countries: s.top.country,
          asns,
          commands,
          credentials,
          hassh: s.top.hassh,
        },
        geo_attribution: deps.geo?.attribution,
      };
    },
    {
      response: { 200: Stats, ...errorResponses({ 400: ["bad_request", 'window must be a number of minutes, hours or days like 15m, 24h or 7d (at most 366d), got "soon"'] }) },
      detail: {
        parameters: StatsQuery.parameters,
        tags: ["Stats"],
        summary: "Event statistics",
        description:
          "Totals, the ingest counters (of every instance of a cluster, summed), each output's and the alert rules' delivery state, and the top source IPs, usernames, passwords, event types, source countries and ASNs, commands, credential pairs and SSH client fingerprints (HASSH) over a time range (a `window` back from now, or `from`/`to`), of one node, pot or kind if asked, with the credit the geolocation data asks for. `window_events` is exact for any range. Without a filter the top lists come from hourly counters and count the whole hours the range reaches into (`top_start`..`top_end`); with a node/pot/kind filter `event_types` stays exact and the others are counted over the range's most recent matching events (`sampled` says how many).",
      },
    },
  );
