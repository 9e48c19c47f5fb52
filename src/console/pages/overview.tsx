/**
 * Overview: over the picked time range (timerange.tsx, in the URL: `?range=7d`, `?from=&to=`),
 * events per step (from /api/v1/stats/timeline, then kept current from the live feed), totals,
 * the world map and top lists (/api/v1/stats); the last hour's count beside it; node and
 * honeypot health (/api/v1/nodes, /api/v1/honeypots, refreshed when the feed says a status
 * changed), each honeypot and kind a link to its dashboard.
 */
import { useEffect } from "preact/hooks";
import { get, qs, type NodeSummary, type Pot, type Stats } from "../api";
import { Card, ErrorNote, LazyWorldMap, Status, TopTable, Unavailable, useAsync, useInterval } from "../components";
import { openFeed } from "../feed";
import { asName, countryName, num } from "../format";
import { attackerHref, drillHref, type Scope as LinkScope } from "../links";
import { RangeChart, stepWords, useTimelines } from "../timeline";
import { pairHref, potHref, type StatsTop } from "./dashboard";
import { isLive, rangeLabel, rangeParams, rangeShort, linkRange, readRange, TimeRangePicker, withRange } from "../timerange";

const DEFAULT_RANGE = "24h";
const LAST_HOUR = { window: "1h" };

function Health() {
  const nodes = useAsync(() => Promise.all([get<{ nodes: NodeSummary[] }>("/api/v1/nodes"), get<{ honeypots: Pot[] }>("/api/v1/honeypots")]), []);
  useEffect(() => {
    let t: ReturnType<typeof setTimeout> | undefined;
    const statuses = new Map<string, string>();
    const close = openFeed({
      kinds: ["NodeRegistration", "NodeDrop", "PotStatusUpdate", "NodeStatusUpdate"],
      onMessage: (kind, p) => {
        // Every heartbeat repeats the node's status: only a change reloads (at most once a second).
        if (kind === "NodeStatusUpdate") {
          if (statuses.get(p?.node_id) === p?.status) return;
          statuses.set(p?.node_id, p?.status);
        }
        t ??= setTimeout(() => ((t = undefined), nodes.reload()), 1000);
      },
    });
    return () => {
      clearTimeout(t);
      close();
    };
  }, []);
  const [nodeList, potList] = nodes.data ?? [null, null];
  return (
    <Card title="Nodes and honeypots" id="health">
      <ErrorNote error={nodes.error} />
      {nodeList && potList && (
        <>
          {nodeList.nodes.length === 0 && <p class="muted">No node has registered yet. Start one with <code>honeybee node</code> or <code>honeybee up</code>.</p>}
          <ul class="health" data-testid="health">
            {nodeList.nodes.map((n) => {
              const pots = potList.honeypots.filter((p) => p.node_id === n.node_id);
              return (
                <li key={n.node_id}>
                  <a href={`/nodes/${n.node_id}`}>
                    <bdi>{n.node_name}</bdi>
                  </a>{" "}
                  <Status value={n.status} />
                  <span class="pots">
                    {pots.length === 0 && <span class="muted">no honeypots</span>}
                    {pots.map((p) => (
                      <span key={p.pot_id} class="pot">
                        <a href={potHref(p)} title="The honeypot's dashboard">
                          <bdi>{p.pot_id}</bdi>
                        </a>{" "}
                        <a class="muted" href={withRange(`/kinds/${encodeURIComponent(p.pot_type)}`)} title="The dashboard of every honeypot of this kind">
                          (<bdi>{p.pot_type}</bdi>)
                        </a>{" "}
                        <Status value={p.status} />
                      </span>
                    ))}
                  </span>
                </li>
              );
            })}
          </ul>
        </>
      )}
    </Card>
  );
}

export function OverviewPage({ query }: { query: URLSearchParams }) {
  const range = readRange(query, DEFAULT_RANGE);
  const key = JSON.stringify(range);
  const stats = useAsync(() => get<Stats>("/api/v1/stats" + qs({ ...rangeParams(range), top: 10 })), [key]);
  useInterval(() => isLive(range) && stats.reload(), 30_000);
  const { series, version, error } = useTimelines([LAST_HOUR, range]);
  const [hour, chosen] = series;
  const s = stats.data;
  const pairs = (s?.top as StatsTop | undefined)?.credentials;
  const lastHour = hour ? hour.counts.reduce((a, b) => a + b, 0) : null;
  const perMinute = hour ? (hour.counts[hour.counts.length - 2] ?? 0) : null;
  const span = rangeShort(range);
  const where: LinkScope = linkRange(query, range);
  const drill = (kind: Parameters<typeof drillHref>[0]) => (v: string) => drillHref(kind, v, where);
  return (
    <main id="main" class="overview">
      <div class="page-head">
        <h1>Overview</h1>
        <TimeRangePicker range={range} fallback={DEFAULT_RANGE} />
      </div>
      <ErrorNote error={stats.error ?? error} />
      <div class="totals" data-testid="totals">
        <div>
          <span class="label">Events stored</span>
          <span class="big">{num(s?.total_events)}</span>
        </div>
        <div>
          <span class="label">Events, {rangeLabel(range)}</span>
          <span class="big" data-testid="range-events">
            {num(s?.window_events)}
          </span>
        </div>
        <div>
          <span class="label">Last hour</span>
          <span class="big" data-testid="last-hour">
            {num(lastHour)}
          </span>
        </div>
        <div>
          <span class="label">Last full minute</span>
          <span class="big">{num(perMinute)}</span>
        </div>
      </div>
      <Card title={`Events per ${stepWords(range)}, ${rangeLabel(range)}`} id="chart-range">
        <RangeChart series={chosen} version={version} label={`events per ${stepWords(range)}, ${rangeLabel(range)}`} />
      </Card>
      <Health />
      {s?.top.countries && (
        <Card title={`Attack sources by country (${span})`} id="world">
          <LazyWorldMap rows={s.top.countries} />
        </Card>
      )}
      {s && (
        <div class="grid3">
          <Card title={`Top source addresses (${span})`} id="top-ips">
            <TopTable rows={s.top.src_ips} label="address" href={attackerHref} testid="top-ips" />
          </Card>
          <Card title={`Top usernames (${span})`} id="top-users">
            <TopTable rows={s.top.usernames} label="username" href={drill("username")} testid="top-usernames" />
          </Card>
          <Card title={`Top passwords (${span})`} id="top-passwords">
            <TopTable rows={s.top.passwords} label="password" href={drill("password")} testid="top-passwords" />
          </Card>
          {pairs && (
            <Card title={`Top credentials (${span})`} id="top-credentials">
              <TopTable rows={pairs} label="username / password" href={(v) => pairHref(v, where)} testid="top-credentials" />
            </Card>
          )}
          <Card title={`Top event types (${span})`} id="top-types">
            <TopTable rows={s.top.event_types} label="event type" href={drill("event_type")} testid="top-types" />
          </Card>
          <Card title={`Top commands (${span})`} id="top-commands">
            {s.top.commands ? <TopTable rows={s.top.commands} label="command" href={drill("command")} /> : <Unavailable what="Top commands" api="top.commands in GET /api/v1/stats" />}
          </Card>
          <Card title={`Top countries and networks (${span})`} id="top-geo">
            {s.top.countries ? (
              <>
                <TopTable rows={s.top.countries} label="country" show={(r) => countryName(r.value)} href={drill("country")} />
                <TopTable rows={s.top.asns} label="network (ASN)" show={(r) => asName(r.value, r.as_org)} href={drill("asn")} />
              </>
            ) : (
              <Unavailable what="Countries and ASNs" api="top.countries and top.asns in GET /api/v1/stats (GeoIP)" />
            )}
          </Card>
          {s.top.hassh && s.top.hassh.length > 0 && (
            <Card title={`Top SSH clients by HASSH (${span})`} id="top-hassh">
              <TopTable rows={s.top.hassh} label="HASSH" href={drill("hassh")} testid="top-hassh" />
            </Card>
          )}
        </div>
      )}
    </main>
  );
}
