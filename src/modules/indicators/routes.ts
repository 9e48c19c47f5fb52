/**
 * Indicators for threat-intelligence tools and firewalls: `GET /api/v1/indicators` (JSON, CSV,
 * STIX 2.1, MISP) and `GET /api/v1/blocklist` (plain text, one address per line).
 */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { AddressIndicator, IndicatorStorage } from "../../db/indicator-store";
import type { GeoLookup } from "../../geo";
import { blocklistFilter, mostActive } from "./addresses";
import { toCsv, toMispEvent, toStixBundle } from "./formats";
import type { Ingest } from "../../core/ingest/types";
import type { Registry } from "../../core/registry";
import { errorResponses } from "../../core/http/errors";
import { queryParams } from "../../core/http/query";
import { parseWindow } from "../../core/http/time-params";

const FORMATS = ["json", "csv", "stix", "misp"] as const;
type Format = (typeof FORMATS)[number];
const MEDIA: Record<Format, string> = {
  json: "application/json; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  stix: "application/stix+json;version=2.1",
  misp: "application/json; charset=utf-8",
};

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

export const Indicator = t.Object({
  ip: t.String({ description: "Source address." }),
  first_seen: t.String({ description: "Start of the first hour the address was seen in the window (ISO 8601; the counters are hourly)." }),
  last_seen: t.String({ description: "End of the last hour it was seen (or now)." }),
  count: t.Integer({ minimum: 1, description: "Events from the address in the window." }),
  country: nullable(t.String({ description: "ISO 3166-1 alpha-2 code." })),
  asn: nullable(t.Integer()),
  as_org: nullable(t.String()),
  credentials: t.Array(t.Object({ username: t.String(), password: nullable(t.String()), count: t.Integer({ minimum: 1 }) }), {
    description: "Usernames and passwords it tried (login events), most frequent first, at most 100.",
  }),
  urls: t.Array(t.String(), { description: "URLs its sessions fetched (`url` of file download events)." }),
  sha256: t.Array(t.String(), { description: "SHA-256 of files its sessions downloaded or uploaded (`shasum`)." }),
});

export const IndicatorList = t.Object(
  {
    generated_at: t.String(),
    window: t.String(),
    window_start: t.String(),
    geo_attribution: t.Optional(t.Object({ country: t.String(), asn: t.String() }, { description: "Where countries and ASNs come from, with the credit their licences ask for; absent with `geo_enrichment` off." })),
    indicators: t.Array(Indicator, { description: "Most active first." }),
  },
  {
    example: {
      generated_at: "2026-11-23T04:00:00.000Z",
      window: "7d",
      window_start: "2026-11-16T04:00:00.000Z",
      geo_attribution: { country: "IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0", asn: "IP to ASN: RouteViews, NRO and DB-IP, CC BY 4.0" },
      indicators: [
        {
          ip: "203.0.113.7",
          first_seen: "2026-11-21T01:00:00.000Z",
          last_seen: "2026-11-22T13:59:59.999Z",
          count: 5120,
          country: "CN",
          asn: 4134,
          as_org: "Chinanet",
          credentials: [{ username: "root", password: "123456", count: 12 }],
          urls: ["http://198.51.100.4/x.sh"],
          sha256: ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
        },
      ],
    },
  },
);

const window = (def: string) => Type.Optional(Type.String({ description: `Addresses seen in this window: minutes, hours or days, e.g. \`15m\`, \`24h\`, \`7d\` (default ${def}).`, example: def }));
const minCount = Type.Optional(Type.Integer({ minimum: 1, default: 1, description: "Only addresses with at least this many events in the window.", example: 5 }));
const limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 10_000, description: "Addresses at most, most active first.", example: 1000 }));

const IndicatorQuery = queryParams(
  Type.Object({
    window: window("7d"),
    min_count: minCount,
    limit,
    format: Type.Optional(
      Type.Union(
        FORMATS.map((f) => Type.Literal(f)),
        { description: "`json` (default), `csv`, `stix` (a STIX 2.1 bundle) or `misp` (a MISP event); or ask by Accept: `text/csv`, `application/stix+json`." },
      ),
    ),
  }),
);

const BlocklistQuery = queryParams(
  Type.Object({
    window: window("24h"),
    min_count: minCount,
    limit,
    include_private: Type.Optional(
      Type.Union([Type.Literal("true"), Type.Literal("false")], {
        description: "`true` lists loopback, private, carrier-grade NAT, link-local, documentation, multicast and reserved addresses too (left out by default).",
        example: "true",
      }),
    ),
  }),
);

function formatOf(query: { format?: Format }, accept: string | null): Format {
  if (query.format) return query.format;
  if (accept?.includes("text/csv")) return "csv";
  if (accept?.includes("application/stix+json")) return "stix";
  return "json";
}

export const indicatorsApi = (deps: {
  indicators: IndicatorStorage;
  ingest: Ingest;
  geo: GeoLookup | null;
  /** Whose nodes' addresses never go on the blocklist. */
  registry?: Pick<Registry, "listNodes" | "link">;
}) =>
  new Elysia({ name: "indicators" })
    .get(
      "/api/v1/indicators",
      async ({ request }) => {
        const query = IndicatorQuery.parse(request.url);
        const win = query.window ?? "7d";
        const now = Date.now();
        const from = now - parseWindow(win);
        // Counters and the address table are written in bulk: have every committed event in them.
        await deps.ingest.countsSettled();
        const list = await deps.indicators.indicators(from, query.min_count ?? 1, query.limit ?? 10_000, now);
        const format = formatOf(query, request.headers.get("accept"));
        const attribution = deps.geo ? `Countries: ${deps.geo.attribution.country}. ASNs: ${deps.geo.attribution.asn}.` : "";
        if (format === "json") return jsonList(list, win, from, now, deps.geo);
        const body = format === "csv" ? toCsv(list) : JSON.stringify(format === "stix" ? toStixBundle(list, { now, attribution }) : toMispEvent(list, { now, attribution }));
        // A Response passes Elysia's response check untouched: the schema describes the JSON form.
        return new Response(body, { headers: { "content-type": MEDIA[format] } }) as unknown as ReturnType<typeof jsonList>;
      },
      {
        response: { 200: IndicatorList, ...errorResponses({ 400: ["bad_request", 'query parameter format: Expected union value, got "xml"'] }) },
        detail: {
          parameters: IndicatorQuery.parameters,
          tags: ["Indicators"],
          summary: "Attacker indicators (JSON, CSV, STIX 2.1, MISP)",
          description:
            "The addresses that sent events in the window, most active first, with first and last hour seen, event count, country and ASN, credentials tried, " +
            "and URLs and SHA-256 hashes from file download events. `format=csv` gives one row per address (cells a spreadsheet would run as formulas are " +
            "prefixed with `'`); `format=stix` a STIX 2.1 bundle with an `indicator` per address (`[ipv4-addr:value = '203.0.113.7']`), URL and file hash, " +
            "ids stable across exports (UUIDv5 of the value); `format=misp` a MISP event (`ip-src`, `url`, `sha256` attributes) to import. " +
            "Times are to the hour (the counters are hourly); credentials, URLs and hashes come from the newest million login and file events of the window.",
        },
      },
    )
    .get(
      "/api/v1/blocklist",
      async ({ request }) => {
        const query = BlocklistQuery.parse(request.url);
        const from = Date.now() - parseWindow(query.window ?? "24h");
        await deps.ingest.countsSettled();
        const keep = blocklistFilter({ includePrivate: query.include_private === "true", excluded: deps.registry ? nodeAddresses(deps.registry) : [] });
        const ips = await mostActive(async (n) => (await deps.indicators.activeAddresses(from, query.min_count ?? 1, n)).map((a) => a.ip), query.limit ?? 10_000, keep);
        // Sorted, so that a firewall reloading it sees a stable file (diffs show what changed).
        ips.sort();
        return new Response(ips.length > 0 ? `${ips.join("\n")}\n` : "", { headers: { "content-type": "text/plain; charset=utf-8" } });
      },
      {
        response: { ...errorResponses({ 400: ["bad_request", 'window must be a number of minutes, hours or days like 15m, 24h or 7d (at most 366d), got "forever"'] }) },
        detail: {
          parameters: BlocklistQuery.parameters,
          tags: ["Indicators"],
          summary: "Blocklist for firewalls (plain text)",
          description:
            "The source addresses with at least `min_count` events in the window, one per line, sorted, nothing else (no comments), for `ipset`, " +
            "nftables sets, pf tables or a web server's deny list. Example: `curl -s 'http://127.0.0.1:9002/api/v1/blocklist?window=24h&min_count=5'`. " +
            "Left out: loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), carrier-grade NAT (100.64/10), link-local (169.254/16, fe80::/10), " +
            "documentation (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32), multicast and reserved addresses, also in their IPv4-mapped form, " +
            "unless `include_private=true`; always the addresses Core knows the nodes by, and source addresses that are not IP addresses. " +
            "`limit` counts the addresses listed.",
          responses: {
            200: { description: "One address per line.", content: { "text/plain": { schema: { type: "string" }, example: "218.92.0.1\n218.92.0.2\n" } } },
          },
        },
      },
    );

function jsonList(list: AddressIndicator[], win: string, from: number, now: number, geo: GeoLookup | null) {
  const hourStart = Math.floor(from / 3_600_000) * 3_600_000;
  return {
    generated_at: new Date(now).toISOString(),
    window: win,
    window_start: new Date(hourStart).toISOString(),
    geo_attribution: geo?.attribution,
    indicators: list.map((a) => ({ ...a, first_seen: new Date(a.first_seen).toISOString(), last_seen: new Date(a.last_seen).toISOString() })),
  };
}

/**
 * What Core knows each node by: the address it registered with (its side of the connection,
 * often private behind NAT) and, while it is connected here, the address its connection comes
 * from (what other nodes' honeypots would see).
 */
function nodeAddresses(registry: Pick<Registry, "listNodes" | "link">): string[] {
  const out: string[] = [];
  for (const n of registry.listNodes()) {
    if (n.address) out.push(n.address);
    const remote = registry.link(n.node_id)?.remoteAddress;
    if (remote) out.push(remote);
  }
  return out;
}
