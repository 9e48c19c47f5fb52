/**
 * Overview: events per minute over the last hour and day (from /api/v1/stats/timeline, then
 * kept current from the live feed), totals and top lists (/api/v1/stats), node and honeypot
 * health (/api/v1/nodes, /api/v1/honeypots, refreshed when the feed says a status changed).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { get, type NodeSummary, type Pot, type Stats } from "../api";
import { Card, ErrorNote, LazyWorldMap, StepChart, Status, TopTable, Unavailable, useAsync, useInterval } from "../components";
import { openFeed } from "../feed";
import { asName, countryName, num } from "../format";

interface Series {
  start: number;
  stepMs: number;
  counts: number[];
}

const MINUTE = 60_000;

/** Moves a series so its last step is the one holding `t`, dropping the oldest steps. */
function advance(s: Series, t: number): void {
  const last = s.start + (s.counts.length - 1) * s.stepMs;
  const steps = Math.floor((t - last) / s.stepMs);
  if (steps <= 0) return;
  const n = Math.min(steps, s.counts.length);
  s.counts.splice(0, n);
  for (let i = 0; i < n; i++) s.counts.push(0);
  s.start += steps * s.stepMs;
}

function bump(s: Series, t: number): void {
  advance(s, t);
  const i = Math.floor((t - s.start) / s.stepMs);
  if (i >= 0 && i < s.counts.length) s.counts[i]!++;
}

async function loadSeries(window: string): Promise<Series> {
  const tl = await get<{ start: string; step_seconds: number; counts: number[] }>(`/api/v1/stats/timeline?window=${window}&step=1m`);
  return { start: Date.parse(tl.start), stepMs: tl.step_seconds * 1000, counts: tl.counts };
}

function useTimelines() {
  const hour = useRef<Series | null>(null);
  const day = useRef<Series | null>(null);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<Error | null>(null);
  const dirty = useRef(false);
  useEffect(() => {
    let live = true;
    const pending: number[] = [];
    Promise.all([loadSeries("1h"), loadSeries("24h")]).then(
      ([h, d]) => {
        if (!live) return;
        hour.current = h;
        day.current = d;
        // Events that arrived on the feed while the timelines loaded may be counted already; a
        // minute's difference of a few events is not worth a second query.
        pending.length = 0;
        setVersion((v) => v + 1);
      },
      (e) => live && setError(e),
    );
    const close = openFeed({
      kinds: ["PotEvent"],
      onMessage: (_kind, e) => {
        const t = Date.parse(e?.timestamp) || Date.now();
        if (!hour.current || !day.current) return void pending.push(t);
        bump(hour.current, t);
        bump(day.current, t);
        dirty.current = true;
      },
    });
    return () => {
      live = false;
      close();
    };
  }, []);
  // Redrawn at most once a second however fast events come, and moved on when none do.
  useInterval(() => {
    const now = Date.now();
    for (const s of [hour.current, day.current]) if (s) advance(s, now);
    if (dirty.current || hour.current) {
      dirty.current = false;
      setVersion((v) => v + 1);
    }
  }, 1000);
  return { hour: hour.current, day: day.current, version, error };
}

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
                        <bdi>{p.pot_id}</bdi> <Status value={p.status} />
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

export function OverviewPage() {
  const stats = useAsync(() => get<Stats>("/api/v1/stats?window=24h&top=10"), []);
  useInterval(() => stats.reload(), 30_000);
  const { hour, day, version, error } = useTimelines();
  const s = stats.data;
  const lastHour = hour ? hour.counts.reduce((a, b) => a + b, 0) : null;
  const perMinute = hour ? (hour.counts[hour.counts.length - 2] ?? 0) : null;
  const ip = (v: string) => `/attackers/${encodeURIComponent(v)}`;
  return (
    <main id="main" class="overview">
      <h1>Overview</h1>
      <ErrorNote error={stats.error ?? error} />
      <div class="totals" data-testid="totals">
        <div>
          <span class="label">Events stored</span>
          <span class="big">{num(s?.total_events)}</span>
        </div>
        <div>
          <span class="label">Last 24 h</span>
          <span class="big">{num(s?.window_events)}</span>
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
      <div class="grid2">
        <Card title="Events per minute, last hour" id="chart-hour">
          {hour ? <StepChart start={hour.start} stepMs={MINUTE} counts={hour.counts} version={version} label="events per minute, last hour" /> : <div class="chart" style={{ height: "160px" }} />}
        </Card>
        <Card title="Events per minute, last 24 hours" id="chart-day">
          {day ? <StepChart start={day.start} stepMs={MINUTE} counts={day.counts} version={version} label="events per minute, last 24 hours" /> : <div class="chart" style={{ height: "160px" }} />}
        </Card>
      </div>
      <Health />
      {s?.top.countries && (
        <Card title="Attack sources by country (24 h)" id="world">
          <LazyWorldMap rows={s.top.countries} />
        </Card>
      )}
      {s && (
        <div class="grid3">
          <Card title="Top source addresses (24 h)" id="top-ips">
            <TopTable rows={s.top.src_ips} label="address" href={ip} testid="top-ips" />
          </Card>
          <Card title="Top usernames (24 h)" id="top-users">
            <TopTable rows={s.top.usernames} label="username" testid="top-usernames" />
          </Card>
          <Card title="Top passwords (24 h)" id="top-passwords">
            <TopTable rows={s.top.passwords} label="password" testid="top-passwords" />
          </Card>
          <Card title="Top event types (24 h)" id="top-types">
            <TopTable rows={s.top.event_types} label="event type" href={(v) => `/events?event_type=${encodeURIComponent(v)}`} testid="top-types" />
          </Card>
          <Card title="Top commands (24 h)" id="top-commands">
            {s.top.commands ? <TopTable rows={s.top.commands} label="command" /> : <Unavailable what="Top commands" api="top.commands in GET /api/v1/stats" />}
          </Card>
          <Card title="Top countries and networks (24 h)" id="top-geo">
            {s.top.countries ? (
              <>
                <TopTable rows={s.top.countries} label="country" show={(r) => countryName(r.value)} href={(v) => `/events?country=${encodeURIComponent(v)}`} />
                <TopTable rows={s.top.asns} label="network (ASN)" show={(r) => asName(r.value, r.as_org)} href={(v) => `/events?asn=${encodeURIComponent(v)}`} />
              </>
            ) : (
              <Unavailable what="Countries and ASNs" api="top.countries and top.asns in GET /api/v1/stats (GeoIP)" />
            )}
          </Card>
          {s.top.hassh && s.top.hassh.length > 0 && (
            <Card title="Top SSH clients by HASSH (24 h)" id="top-hassh">
              <TopTable rows={s.top.hassh} label="HASSH" href={(v) => `/events?hassh=${encodeURIComponent(v)}`} testid="top-hassh" />
            </Card>
          )}
        </div>
      )}
    </main>
  );
}
