/**
 * Dashboards (docs/console.md): what a kind of honeypot, one honeypot or one node saw over the
 * picked time range. Events over time, top sources, countries, networks, usernames, passwords,
 * credential pairs, commands and event types from GET /api/v1/stats with the scope's filter;
 * then one table per `dashboard` entry of the kind's manifest (GET /api/v1/catalogue) from
 * GET /api/v1/stats/top, so a new kind gets its dashboard without console code. Every value
 * links to the events it stands for (links.ts), scoped and over the same range.
 */
import { ApiError, get, qs, type CatalogueKind, type NodeSummary, type Pot, type Stats, type TopEntry } from "../api";
import { Card, ErrorNote, Status, TopTable, Unavailable, useAsync, useInterval } from "../components";
import { asName, countryName, num } from "../format";
import { attackerHref, drillHref, eventsHref, type DrillKind, type Scope as LinkScope } from "../links";
import { RangeChart, stepWords, useTimelines, type Scope } from "../timeline";
import { isLive, linkRange, rangeLabel, rangeParams, readRange, TimeRangePicker, withRange, type TimeRange } from "../timerange";

/** A table a kind's manifest asks for: the top values of one data field of one event type. */
export interface DashboardEntry {
  title: string;
  event_type: string;
  field: string;
}
type KindWithDashboard = CatalogueKind & { dashboard?: DashboardEntry[] };

/** The answer of GET /api/v1/stats/top. */
interface TopAnswer {
  field: string;
  event_type: string;
  values: TopEntry[];
  /** Events read: the range's most recent matching ones, up to Core's limit. */
  sampled: number;
}


/** Stats' top lists, credential pairs among them (a Core of issue 34 on: optional). */
export type StatsTop = Stats["top"] & { credentials?: TopEntry[] };

export const DEFAULT_RANGE = "24h";

/** A credential pair as the stats write it (`root / 123456`) to the events that tried both. */
export function pairHref(pair: string, where: LinkScope): string {
  const i = pair.indexOf(" / ");
  return i < 0 ? drillHref("username", pair, where) : eventsHref({ ...where, username: pair.slice(0, i), password: pair.slice(i + 3) });
}

/** Data fields a manifest may name whose values have a drill-down of their own (links.ts); `input` is a command's. */
const DRILL_FIELDS: Record<string, DrillKind> = { src_ip: "src_ip", username: "username", password: "password", input: "command", command: "command", hassh: "hassh", country: "country", asn: "asn" };

/**
 * Where a manifest table's value leads: a credential pair (`username,password`) to the events
 * that tried both, a field with a drill-down to it, any other to the events of the entry's type
 * (a type ending in `.*` names several: the link keeps to the scope).
 */
function entryHref(entry: DashboardEntry, where: LinkScope): (v: string) => string {
  const exact = entry.event_type.endsWith(".*") ? {} : { event_type: entry.event_type };
  if (entry.field === "username,password") return (v) => pairHref(v, { ...where, ...exact });
  const kind = DRILL_FIELDS[entry.field];
  if (kind === "src_ip") return attackerHref;
  return kind ? (v) => drillHref(kind, v, { ...where, ...exact }) : () => eventsHref({ ...where, ...exact });
}

/** A top table whose values link to the scope's events over the range (addresses to their attacker page). */
function Top({ rows, label, kind, scope, when, testid, show }: { rows: TopEntry[] | undefined; label: string; kind: DrillKind; scope: Scope; when: Record<string, string>; testid?: string; show?: (r: TopEntry) => string }) {
  const where: LinkScope = { ...scope, ...when };
  const href = (v: string) => (kind === "src_ip" ? attackerHref(v) : drillHref(kind, v, where));
  return <TopTable rows={rows} label={label} href={href} testid={testid} show={show} />;
}

function Fact({ label, value }: { label: string; value: string | undefined }) {
  return (
    <div>
      <span class="label">{label}</span>
      <span class="big ellipsis">
        <bdi>{value ?? "–"}</bdi>
      </span>
    </div>
  );
}

/** One manifest entry's table from GET /api/v1/stats/top. */
function EntryTable({ entry, scope, range, when }: { entry: DashboardEntry; scope: Scope; range: TimeRange; when: Record<string, string> }) {
  const r = useAsync(() => get<TopAnswer>("/api/v1/stats/top" + qs({ field: entry.field, event_type: entry.event_type, ...scope, ...rangeParams(range), top: 10 })), [JSON.stringify([entry, scope, range])]);
  useInterval(() => isLive(range) && r.reload(), 60_000);
  const missing = r.error instanceof ApiError && r.error.status === 404 && r.error.code === "not_found" && /no such path/.test(r.error.message);
  return (
    <Card title={entry.title} id={`entry-${entry.event_type}-${entry.field}`.replace(/[^A-Za-z0-9_-]/g, "-")}>
      {missing ? <Unavailable what={entry.title} api="GET /api/v1/stats/top" /> : <ErrorNote error={r.error} />}
      {r.data && <TopTable rows={r.data.values} label={entry.field.replaceAll(",", " / ")} href={entryHref(entry, { ...scope, ...when })} show={(x) => x.value} />}
      <p class="muted small">
        <span class="mono">
          {entry.event_type} · {entry.field}
        </span>
        {r.data && ` · ${num(r.data.sampled)} ${r.data.sampled === 1 ? "event" : "events"} read`}
      </p>
    </Card>
  );
}

/**
 * The dashboard of a scope: every event (no filter), a node's, a honeypot's or a kind's;
 * `kinds` are the honeypot kinds whose manifests' tables it shows.
 */
export function Dashboard({ scope, kinds, query, fallback = DEFAULT_RANGE }: { scope: Scope; kinds: string[]; query: URLSearchParams; fallback?: string }) {
  const range = readRange(query, fallback);
  const key = JSON.stringify([scope, range]);
  const stats = useAsync(() => get<Stats>("/api/v1/stats" + qs({ ...scope, ...rangeParams(range), top: 10 })), [key]);
  useInterval(() => isLive(range) && stats.reload(), 30_000);
  const cat = useAsync(() => get<{ kinds: KindWithDashboard[] }>("/api/v1/catalogue"), []);
  const { series, version, error } = useTimelines([range], scope);
  const top = stats.data?.top as StatsTop | undefined;
  const mine = (cat.data?.kinds ?? []).filter((k) => kinds.includes(k.name));
  const entries = mine.flatMap((k) => k.dashboard ?? []);
  // A list every kind's manifest has a table of (cowrie's commands, its HASSHes) is not shown twice.
  const own = (field: string) => mine.length > 0 && mine.length === kinds.length && mine.every((k) => k.dashboard?.some((e) => e.field === field));
  // Commands, for kinds that have a shell (or whose manifest this Core does not know).
  const commands = !own("input") && (mine.length < kinds.length || mine.some((k) => k.events.some((e) => e.includes(".command."))) || (top?.commands?.length ?? 0) > 0);
  const common = { scope, when: linkRange(query, range) };
  return (
    <section class="dashboard" aria-label="Dashboard" data-testid="dashboard">
      <div class="dash-head">
        <TimeRangePicker range={range} fallback={fallback} />
      </div>
      <ErrorNote error={stats.error ?? error} />
      <div class="totals" data-testid="dash-totals">
        <div>
          <span class="label">Events, {rangeLabel(range)}</span>
          <span class="big" data-testid="range-events">
            {num(stats.data?.window_events)}
          </span>
        </div>
        <Fact label="Busiest source" value={top?.src_ips[0]?.value} />
        <Fact label="Most tried username" value={top?.usernames[0]?.value} />
        <Fact label="Most tried password" value={top?.passwords[0]?.value} />
      </div>
      <Card title={`Events per ${stepWords(range)}, ${rangeLabel(range)}`} id="dash-chart">
        <RangeChart series={series[0]} version={version} label={`events per ${stepWords(range)}, ${rangeLabel(range)}`} />
      </Card>
      {top && (
        <div class="grid3">
          <Card title="Top sources" id="dash-sources">
            <Top rows={top.src_ips} label="address" kind="src_ip" {...common} testid="dash-sources" />
          </Card>
          <Card title="Countries" id="dash-countries">
            {top.countries ? <Top rows={top.countries} label="country" kind="country" show={(r) => countryName(r.value)} {...common} testid="dash-countries" /> : <Unavailable what="Countries" api="top.countries in GET /api/v1/stats (GeoIP)" />}
          </Card>
          <Card title="Networks (ASN)" id="dash-asns">
            {top.asns ? <Top rows={top.asns} label="network (ASN)" kind="asn" show={(r) => asName(r.value, r.as_org)} {...common} testid="dash-asns" /> : <Unavailable what="Networks" api="top.asns in GET /api/v1/stats (GeoIP)" />}
          </Card>
          <Card title="Usernames" id="dash-usernames">
            <Top rows={top.usernames} label="username" kind="username" {...common} testid="dash-usernames" />
          </Card>
          <Card title="Passwords" id="dash-passwords">
            <Top rows={top.passwords} label="password" kind="password" {...common} testid="dash-passwords" />
          </Card>
          {top.credentials && !own("username,password") && (
            <Card title="Credentials (username / password)" id="dash-credentials">
              <TopTable rows={top.credentials} label="username / password" href={(v) => pairHref(v, { ...scope, ...common.when })} testid="dash-credentials" />
            </Card>
          )}
          {commands && (
            <Card title="Commands" id="dash-commands">
              {top.commands ? <Top rows={top.commands} label="command" kind="command" {...common} testid="dash-commands" /> : <Unavailable what="Commands" api="top.commands in GET /api/v1/stats" />}
            </Card>
          )}
          <Card title="Event types" id="dash-types">
            <Top rows={top.event_types} label="event type" kind="event_type" {...common} testid="dash-types" />
          </Card>
          {top.hassh && top.hassh.length > 0 && !own("hassh") && (
            <Card title="SSH clients (HASSH)" id="dash-hassh">
              <Top rows={top.hassh} label="HASSH" kind="hassh" {...common} testid="dash-hassh" />
            </Card>
          )}
        </div>
      )}
      <ErrorNote error={cat.error} />
      {entries.length > 0 && (
        <>
          <h2 class="dash-sub">From the {kinds.length === 1 ? `${kinds[0]} manifest` : "kinds' manifests"}</h2>
          <div class="grid3" data-testid="manifest-tables">
            {entries.map((e) => (
              <EntryTable key={`${e.event_type} ${e.field}`} entry={e} range={range} {...common} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}

/** The dashboard of one honeypot: pot ids are per node, so its node's too when it has one. */
export const potHref = (pot: { pot_id: string; node_id?: string | null }) => withRange(`/pots/${encodeURIComponent(pot.pot_id)}${pot.node_id && pot.node_id !== "0" ? `?node_id=${pot.node_id}` : ""}`);

const usePots = () => useAsync(() => Promise.all([get<{ honeypots: Pot[] }>("/api/v1/honeypots"), get<{ nodes: NodeSummary[] }>("/api/v1/nodes")]), []);

/** `/kinds/{kind}`: every honeypot of one kind. */
export function KindPage({ kind, query }: { kind: string; query: URLSearchParams }) {
  const cat = useAsync(() => get<{ kinds: KindWithDashboard[] }>("/api/v1/catalogue"), []);
  const pots = usePots();
  const k = cat.data?.kinds.find((x) => x.name === kind);
  const mine = pots.data?.[0].honeypots.filter((p) => p.pot_type === kind) ?? [];
  return (
    <main id="main" class="dashboard-page">
      <h1>
        Kind <bdi>{kind}</bdi>
      </h1>
      <ErrorNote error={cat.error ?? pots.error} />
      {k && <p class="muted">{k.description}</p>}
      {cat.data && !k && <p class="muted">Not a kind of this Core's catalogue: its events are counted as they came.</p>}
      <p data-testid="kind-pots">
        <span class="muted">Honeypots: </span>
        {pots.data && mine.length === 0 && <span class="muted">none registered</span>}
        {mine.map((p) => (
          <span key={`${p.node_id} ${p.pot_id}`} class="pot">
            <a href={potHref(p)}>
              <bdi>{p.pot_id}</bdi>
            </a>{" "}
            <Status value={p.status} />
          </span>
        ))}
      </p>
      <Dashboard scope={{ pot_type: kind }} kinds={[kind]} query={query} />
    </main>
  );
}

/** `/pots/{pot_id}`: one honeypot; `?node_id=` the one on that node (pot ids are per node), else every one of that id. */
export function PotPage({ potId, query }: { potId: string; query: URLSearchParams }) {
  const pots = usePots();
  const nodeId = query.get("node_id") ?? undefined;
  const [list, nodes] = pots.data ?? [null, null];
  const mine = list?.honeypots.filter((p) => p.pot_id === potId && (!nodeId || p.node_id === nodeId)) ?? [];
  const kinds = [...new Set(mine.map((p) => p.pot_type))];
  const nodeName = (id?: string) => nodes?.nodes.find((n) => n.node_id === id)?.node_name ?? id;
  return (
    <main id="main" class="dashboard-page">
      <h1>
        Honeypot <bdi>{potId}</bdi>
      </h1>
      <ErrorNote error={pots.error} />
      {list && mine.length === 0 && <p class="muted">No honeypot of this id is registered now; its stored events are counted below.</p>}
      {mine.length > 0 && (
        <dl class="facts" data-testid="pot-facts">
          {mine.map((p) => (
            <div key={p.node_id ?? ""}>
              <dt>
                {p.node_id && p.node_id !== "0" ? (
                  <>
                    on node <a href={withRange(`/nodes/${p.node_id}`)}>{nodeName(p.node_id)}</a>
                  </>
                ) : (
                  "reported without a node"
                )}
              </dt>
              <dd>
                kind <a href={withRange(`/kinds/${encodeURIComponent(p.pot_type)}`)}>{p.pot_type}</a> <Status value={p.status} />
              </dd>
            </div>
          ))}
        </dl>
      )}
      {list && <Dashboard scope={nodeId ? { node_id: nodeId, pot_id: potId } : { pot_id: potId }} kinds={kinds} query={query} />}
    </main>
  );
}

/** The node page's dashboard section: its events over the range, with its kinds' tables. */
export function NodeDashboard({ nodeId, kinds, query }: { nodeId: string; kinds: string[]; query: URLSearchParams }) {
  return (
    <section class="node-dashboard" id="node-dashboard" aria-labelledby="node-dashboard-h">
      <h2 id="node-dashboard-h">Dashboard</h2>
      <Dashboard scope={{ node_id: nodeId }} kinds={kinds} query={query} />
    </section>
  );
}
