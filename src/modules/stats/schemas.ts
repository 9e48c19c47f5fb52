/** The stats' REST shape (docs/api.md): one schema feeds validation, the types, OpenAPI and the console. */
import { Type } from "@sinclair/typebox";
import { COMMANDS_SAMPLE, type TopEntry as Entry } from "../../db/read-limits";
import { OutputStatus } from "../outputs/schemas";
import { RulesStatus } from "../rules/schemas";

/** One entry of a top list. */
export const TopEntry = Type.Object({ value: Type.String(), count: Type.Integer({ minimum: 0 }) });

const TopList = (what: string, example: Entry[]) =>
  Type.Array(TopEntry, { description: `Most frequent ${what} in the range, most frequent first.`, example });

export const Stats = Type.Object(
  {
    total_events: Type.Integer({ minimum: 0, description: "Events stored (all of them, whatever the node/pot/kind filter)." }),
    window: Type.String({ description: "The window asked for (`15m`, `24h`, `7d`...), or `custom` for a `from`/`to` range." }),
    window_start: Type.String({ description: "Start of the range (ISO 8601, inclusive): now minus the window, or `from`." }),
    window_end: Type.Optional(Type.String({ description: "End of the range (ISO 8601, exclusive): now, or `to`." })),
    window_events: Type.Integer({ minimum: 0, description: "Events whose time is in the range (of the node/pot/kind asked for), counted exactly: from the segment summaries where a whole segment of events is in the range (and of the filter's sources), by reading the others." }),
    top_start: Type.Optional(Type.String({ description: "Without a node/pot/kind filter the top lists (but `commands`) come from hourly counters: they count the whole hours from `top_start` (ISO 8601, the range's start rounded down to the hour) to `top_end` (its end rounded up). With a filter they count the range itself." })),
    top_end: Type.Optional(Type.String({ description: "End of what the top lists count (ISO 8601, exclusive): see `top_start`." })),
    sampled: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: `With a node/pot/kind filter (the hourly counters have no such dimension) the top lists but \`event_types\` are counted over the range's most recent matching events, at most ${COMMANDS_SAMPLE.toLocaleString("en")}: how many were read (\`event_types\` and \`window_events\` stay exact). Null without a filter.`,
    })),
    ingest: Type.Object(
      {
        received: Type.Integer({ description: "Messages offered as events since Core started (event socket and control channel)." }),
        committed: Type.Integer({ description: "Events committed since Core started." }),
        rejected: Type.Integer({ description: "Messages skipped as bad input since Core started." }),
        connections: Type.Integer({ description: "Open event socket connections." }),
        pending: Type.Integer({ description: "Events received and not yet committed." }),
        duplicates: Type.Integer({ description: "Events a node sent again (after a reconnect, a crash, a fail-over) that were stored before, known by the node's spool and position, never by content: skipped as they arrive, or, in a cluster, dropped by this instance's writer." }),
        unreadable_timestamps: Type.Integer({ description: "Events whose timestamp could not be read (not ISO 8601, RFC 2822 or unix time): stored at their receive time, the text kept in data.timestamp." }),
      },
      { description: "Counters of this Core process." },
    ),
    security: Type.Object(
      {
        auth_enabled: Type.Boolean({ description: "API tokens are configured." }),
        node_auth_enabled: Type.Boolean({ description: "Nodes must enroll and prove themselves with TOTP." }),
        tls: Type.Boolean(),
        auth_failures: Type.Integer({ description: "Requests with a missing or invalid API token." }),
        forbidden: Type.Integer({ description: "Requests or commands refused for the token's role." }),
        node_auth_failures: Type.Integer({ description: "Refused node registrations and event streams." }),
        rate_limited: Type.Object({ api: Type.Integer(), ws_commands: Type.Integer() }),
        connections_refused: Type.Object({ node: Type.Integer(), events: Type.Integer(), ws: Type.Integer() }),
      },
      { description: "What the security layer refused since Core started." },
    ),
    outputs: Type.Array(OutputStatus, { description: "Each output's position, lag and delivery counts (docs/outputs.md)." }),
    rules: RulesStatus,
    top: Type.Object({
      src_ips: TopList("source addresses", [{ value: "203.0.113.7", count: 5120 }]),
      usernames: TopList("usernames tried", [{ value: "root", count: 3311 }]),
      passwords: TopList("passwords tried", [{ value: "123456", count: 901 }]),
      event_types: TopList("event types", [{ value: "cowrie.login.failed", count: 48210 }]),
      // Optional in the schema only so that the CLI reads an older Core; this Core always sends them.
      countries: Type.Optional(TopList("source countries (ISO 3166-1 alpha-2 codes of the source addresses)", [{ value: "CN", count: 20544 }])),
      asns: Type.Optional(Type.Array(Type.Object({ value: Type.String({ description: "The ASN, as text like the other lists." }), as_org: Type.Union([Type.String(), Type.Null()]), count: Type.Integer({ minimum: 0 }) }), {
        description: "Most frequent source autonomous systems in the window, most frequent first.",
        example: [{ value: "4134", as_org: "Chinanet", count: 9120 }],
      })),
      commands: Type.Optional(TopList(`commands typed (cowrie.command.input), counted over the window's most recent ${COMMANDS_SAMPLE.toLocaleString("en")} command events`, [{ value: "uname -a", count: 1204 }])),
      credentials: Type.Optional(
        TopList(`username / password pairs tried (\`username\` and \`password\` of \`<kind>.login.*\` events, as \`root / 123456\`), counted over the range's most recent ${COMMANDS_SAMPLE.toLocaleString("en")} login events`, [
          { value: "root / 123456", count: 640 },
        ]),
      ),
      hassh: Type.Optional(
        TopList("SSH client fingerprints (HASSH: the `hassh` of key exchange events, `cowrie.client.kex`, one per SSH connection; the events' `hassh` filter finds them)", [
          { value: "472b5de333ad665af5cbf10ff892c4df", count: 812 },
        ]),
      ),
    }),
    geo_attribution: Type.Optional(Type.Object(
      { country: Type.String(), asn: Type.String() },
      { description: "Where the countries and ASNs come from, with the credit their licences ask for (CC BY 4.0 for the shipped data)." },
    )),
  },
  {
    example: {
      total_events: 10_482_113,
      window: "24h",
      window_start: "2026-11-21T01:07:12.000Z",
      window_end: "2026-11-22T01:07:12.000Z",
      top_start: "2026-11-21T01:00:00.000Z",
      top_end: "2026-11-22T02:00:00.000Z",
      sampled: null,
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
        credentials: [{ value: "root / 123456", count: 640 }],
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

/** `GET /api/v1/stats/top`: the most frequent values of one data field. */
export const FieldTop = Type.Object(
  {
    field: Type.String({ description: "The field, as asked." }),
    event_type: Type.Union([Type.String(), Type.Null()], { description: "The event type asked for (`<prefix>.*`: every type it starts); null: every type." }),
    window: Type.String({ description: "The window asked for, or `custom` for a `from`/`to` range." }),
    window_start: Type.String({ description: "Start of the range (ISO 8601, inclusive)." }),
    window_end: Type.String({ description: "End of the range (ISO 8601, exclusive)." }),
    values: Type.Array(TopEntry, { description: "Most frequent values first (ties by value); text as it is, numbers and booleans as text, each element of an array; events without the field (or with an object there) count for nothing. Several fields: their first values joined by ` / `, of the events that have them all." }),
    sampled: Type.Integer({ minimum: 0, description: `Events read: the range's most recent matching events, at most ${COMMANDS_SAMPLE.toLocaleString("en")}.` }),
  },
  {
    example: {
      field: "path",
      event_type: "web.request",
      window: "24h",
      window_start: "2026-11-21T01:07:12.000Z",
      window_end: "2026-11-22T01:07:12.000Z",
      values: [{ value: "/.env", count: 412 }, { value: "/wp-login.php", count: 207 }],
      sampled: 10_000,
    },
  },
);

export const Timeline = Type.Object(
  {
    start: Type.String({ description: "Start of the first step (ISO 8601, a multiple of the step)." }),
    step_seconds: Type.Integer({ minimum: 60 }),
    counts: Type.Array(Type.Integer({ minimum: 0 }), { description: "Events per step (of the node/pot/kind asked for), oldest first; with a window, the last step is the one now in progress; with from/to, the steps cover the range." }),
  },
  { example: { start: "2026-11-22T00:01:00.000Z", step_seconds: 60, counts: [0, 4, 17] } },
);
