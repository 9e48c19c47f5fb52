/**
 * Stats: totals, the ingest counters, and top source IPs, usernames, passwords, event types,
 * countries, ASNs, commands and SSH client fingerprints (HASSH) over a window. The top lists come from hourly counters (see the `event_counts`
 * table), so a window is counted in whole hours. The writer keeps the counters of recent
 * batches in memory for `stats_flush_ms`; a read has them written first, so it counts every
 * event that `GET /api/v1/events` shows.
 */
import { Elysia, t } from "elysia";
import type { AddressStorage } from "../../db/address-store";
import { COMMANDS_SAMPLE, type TopEntry } from "../../db/event-queries";
import type { EventReader } from "../../db/stores";
import type { GeoLookup } from "../../geo";
import type { Ingest, IngestCounters } from "../../core/ingest/types";
import { Type } from "@sinclair/typebox";
import { errorResponses } from "../../core/http/errors";
import { parseWindow } from "../../core/http/time-params";
import { queryParams } from "../../core/http/query";
import { OutputStatus } from "../outputs";
import { RulesStatus } from "../rules";

const TopList = (what: string, example: TopEntry[]) =>
  t.Array(t.Object({ value: t.String(), count: t.Integer({ minimum: 0 }) }), { description: `Most frequent ${what} in the window, most frequent first.`, example });

export const Stats = t.Object(
  {
    total_events: t.Integer({ minimum: 0, description: "Events stored." }),
    window: t.String({ description: "The window asked for." }),
    window_start: t.String({ description: "Start of the window (ISO 8601, rounded down to the hour)." }),
    window_events: t.Integer({ minimum: 0, description: "Events whose time is in the window." }),
    ingest: t.Object(
      {
        received: t.Integer({ description: "Messages offered as events since Core started (event socket and control channel)." }),
        committed: t.Integer({ description: "Events committed since Core started." }),
        rejected: t.Integer({ description: "Messages skipped as bad input since Core started." }),
        connections: t.Integer({ description: "Open event socket connections." }),
        pending: t.Integer({ description: "Events received and not yet committed." }),
        duplicates: t.Integer({ description: "Events a node sent again (after a reconnect, a crash, a fail-over) that were stored before, known by the node's spool and position, never by content: skipped as they arrive, or, in a cluster, dropped by this instance's writer." }),
        unreadable_timestamps: t.Integer({ description: "Events whose timestamp could not be read (not ISO 8601, RFC 2822 or unix time): stored at their receive time, the text kept in data.timestamp." }),
      },
      { description: "Counters of this Core process." },
    ),
    security: t.Object(
      {
        auth_enabled: t.Boolean({ description: "API tokens are configured." }),
        node_auth_enabled: t.Boolean({ description: "Nodes must enroll and prove themselves with TOTP." }),
        tls: t.Boolean(),
        auth_failures: t.Integer({ description: "Requests with a missing or invalid API token." }),
        forbidden: t.Integer({ description: "Requests or commands refused for the token's role." }),
        node_auth_failures: t.Integer({ description: "Refused node registrations and event streams." }),
        rate_limited: t.Object({ api: t.Integer(), ws_commands: t.Integer() }),
        connections_refused: t.Object({ node: t.Integer(), events: t.Integer(), ws: t.Integer() }),
      },
      { description: "What the security layer refused since Core started." },
    ),
    outputs: t.Array(OutputStatus, { description: "Each output's position, lag and delivery counts (docs/outputs.md)." }),
    rules: RulesStatus,
    top: t.Object({
      src_ips: TopList("source addresses", [{ value: "203.0.113.7", count: 5120 }]),
      usernames: TopList("usernames tried", [{ value: "root", count: 3311 }]),
      passwords: TopList("passwords tried", [{ value: "123456", count: 901 }]),
      event_types: TopList("event types", [{ value: "cowrie.login.failed", count: 48210 }]),
      // Optional in the schema only so that the CLI reads an older Core; this Core always sends them.
      countries: t.Optional(TopList("source countries (ISO 3166-1 alpha-2 codes of the source addresses)", [{ value: "CN", count: 20544 }])),
      asns: t.Optional(t.Array(t.Object({ value: t.String({ description: "The ASN, as text like the other lists." }), as_org: t.Union([t.String(), t.Null()]), count: t.Integer({ minimum: 0 }) }), {
        description: "Most frequent source autonomous systems in the window, most frequent first.",
        example: [{ value: "4134", as_org: "Chinanet", count: 9120 }],
      })),
      commands: t.Optional(TopList(`commands typed (cowrie.command.input), counted over the window's most recent ${COMMANDS_SAMPLE.toLocaleString("en")} command events`, [{ value: "uname -a", count: 1204 }])),
      hassh: t.Optional(
        TopList("SSH client fingerprints (HASSH: the `hassh` of key exchange events, `cowrie.client.kex`, one per SSH connection; the events' `hassh` filter finds them)", [
          { value: "472b5de333ad665af5cbf10ff892c4df", count: 812 },
        ]),
      ),
    }),
    geo_attribution: t.Optional(t.Object(
      { country: t.String(), asn: t.String() },
      { description: "Where the countries and ASNs come from, with the credit their licences ask for (CC BY 4.0 for the shipped data)." },
    )),
  },
  {
    example: {
      total_events: 10_482_113,
      window: "24h",
      window_start: "2026-11-21T01:00:00.000Z",
      window_events: 61_204,
      ingest: { received: 61_240, committed: 61_204, rejected: 36, connections: 3, pending: 0, duplicates: 0, unreadable_timestamps: 2 },
      security: {
        auth_enabled: true,
        node_auth_enabled: true,
        tls: true,
        auth_failures: 4,
        forbidden: 1,
        node_auth_failures: 0,
        rate_limited: { api: 12, ws_commands: 0 },
        connections_refused: { node: 0, events: 0, ws: 0 },
      },
      outputs: [{ name: "siem", type: "syslog", origin: "config", state: "idle", position: 10_482_113, lag: 0, delivered: 61_204, failed: 3, dropped: 0, last_error: null, last_delivery_at: "2026-11-23T04:10:00.000Z" }],
      rules: { state: "idle", position: 10_482_113, lag: 0, delivered: 61_204, failed: 0, dropped: 0, last_error: null, last_delivery_at: "2026-11-23T04:10:00.000Z", alerts: 12, suppressed: { "successful-login": 40 } },
      top: {
        src_ips: [{ value: "203.0.113.7", count: 5120 }],
        usernames: [{ value: "root", count: 3311 }],
        passwords: [{ value: "123456", count: 901 }],
        event_types: [{ value: "cowrie.login.failed", count: 48210 }],
        countries: [{ value: "CN", count: 20544 }],
        asns: [{ value: "4134", as_org: "Chinanet", count: 9120 }],
        commands: [{ value: "uname -a", count: 1204 }],
        hassh: [{ value: "472b5de333ad665af5cbf10ff892c4df", count: 812 }],
      },
      geo_attribution: {
        country: "IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0",
        asn: "IP to ASN: RouteViews (https://www.routeviews.org), NRO (https://www.nro.net) and DB-IP (https://db-ip.com), CC BY 4.0, via ip-location-db",
      },
    },
  },
);

export type Stats = typeof Stats.static;

const StatsQuery = queryParams(
  Type.Object({
    window: Type.Optional(Type.String({ description: "Window for the counts and top lists: hours or days, e.g. `24h`, `7d`.", default: "24h", example: "24h" })),
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

export const statsApi = (deps: { queries: EventReader; addresses: AddressStorage; ingest: Ingest; counters?: () => IngestCounters; security: () => Stats["security"]; geo: GeoLookup | null; outputs?: OutputsStats }) =>
  new Elysia({ name: "stats" }).get(
    "/api/v1/stats",
    async ({ request }) => {
      const query = StatsQuery.parse(request.url);
      const window = query.window ?? "24h";
      const windowMs = parseWindow(window);
      await deps.ingest.countsSettled();
      const top = query.top ?? 10;
      const s = await deps.queries.stats(windowMs, top);
      const [asns, commands] = await Promise.all([withOrgs(deps.addresses, s.top.asn), deps.queries.topCommands(s.windowStart, top)]);
      const { received, committed, rejected, connections, pending, duplicates, unreadable_timestamps } = deps.counters?.() ?? deps.ingest.counters;
      return {
        total_events: s.totalEvents,
        window,
        window_start: new Date(s.windowStart).toISOString(),
        window_events: s.windowEvents,
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
          hassh: s.top.hassh,
        },
        geo_attribution: deps.geo?.attribution,
      };
    },
    {
      response: { 200: Stats, ...errorResponses({ 400: ["bad_request", 'window must be a number of hours or days like 24h or 7d (at most 366d), got "soon"'] }) },
      detail: {
        parameters: StatsQuery.parameters, tags: ["Stats"], summary: "Event statistics", description: "Totals, the ingest counters (of every instance of a cluster, summed), each output's and the alert rules' delivery state, and the top source IPs, usernames, passwords, event types, source countries and ASNs, commands and SSH client fingerprints (HASSH) over a window, with the credit the geolocation data asks for." },
    },
  );
