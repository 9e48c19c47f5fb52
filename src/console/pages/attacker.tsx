/**
 * An attacker: everything one source address did, read from GET /api/v1/events?src_ip= (the
 * newest MAX events): first and last seen, honeypots, sessions, credentials tried, commands
 * and downloads. Country and network appear when events carry `geo` (GeoIP on Core). Its
 * sessions come from GET /api/v1/sessions?src_ip= (every one, not only those in the newest events).
 * Its honeypots and event types link to this address's events of them; its credentials,
 * commands, country and network to every event that shares them (who else).
 */
import { Fragment } from "preact";
import { ApiError, get, qs, type EventRecord, type Stats } from "../api";
import { Card, Credentials, DrillLink, ErrorNote, Summary, useAsync } from "../components";
import { asName, countryName, num, time } from "../format";
import { eventsHref } from "../links";
import { SessionsTable } from "../sessions/table";
import type { SessionPage, SessionSummary } from "../sessions/types";

const MAX = 5000;
const MAX_SESSIONS = 1000;

/** The address's sessions, newest first; null on a Core without the sessions API. */
async function loadSessions(ip: string): Promise<{ sessions: SessionSummary[]; more: boolean } | null> {
  const sessions: SessionSummary[] = [];
  let cursor: string | null = null;
  do {
    let page: SessionPage;
    try {
      page = await get("/api/v1/sessions" + qs({ src_ip: ip, limit: 1000, cursor }));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && /no such path/.test(e.message)) return null;
      throw e;
    }
    sessions.push(...page.sessions);
    cursor = page.next_cursor;
  } while (cursor && sessions.length < MAX_SESSIONS);
  return { sessions, more: cursor !== null };
}

async function load(ip: string): Promise<{ events: EventRecord[]; more: boolean }> {
  const events: EventRecord[] = [];
  let cursor: string | null = null;
  do {
    const page: { events: EventRecord[]; next_cursor: string | null } = await get("/api/v1/events" + qs({ src_ip: ip, limit: 1000, cursor }));
    events.push(...page.events);
    cursor = page.next_cursor;
  } while (cursor && events.length < MAX);
  return { events, more: cursor !== null };
}

/** `cowrie.session.file_download.failed`, `….file_upload.failed`: the transfer never happened. */
const failed = (e: EventRecord) => e.event_type.endsWith(".failed");

function counted(values: string[]): [string, number][] {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m].sort((a, b) => b[1] - a[1]);
}

export function AttackerPage({ ip }: { ip: string }) {
  const r = useAsync(() => load(ip), [ip]);
  const rs = useAsync(() => loadSessions(ip), [ip]);
  // Whether Core has GeoIP at all: its stats carry the data's credit only then.
  const geoip = useAsync(() => get<Stats>("/api/v1/stats?window=1h&top=1").then((s) => s.geo_attribution !== undefined), []);
  const events = r.data?.events ?? [];
  const newest = events[0];
  const oldest = events[events.length - 1];
  const tried = events.filter((e) => e.data?.username !== undefined && e.data?.password !== undefined).map((e) => [String(e.data.username), String(e.data.password)] as const);
  const creds = counted(tried.map((c) => JSON.stringify(c))).map(([c, n]) => [JSON.parse(c) as [string, string], n] as const);
  const commands = events.filter((e) => typeof e.data?.input === "string" && e.event_type.includes("command"));
  const downloads = events.filter((e) => typeof e.data?.url === "string");
  const sessions = counted(events.map((e) => e.data?.session).filter((s): s is string => typeof s === "string"));
  const pots = counted(events.map((e) => e.pot_id ?? "?"));
  const geo = events.find((e) => e.geo)?.geo;
  return (
    <main id="main" class="attacker">
      <h1>
        Attacker <span class="mono">{ip}</span>
      </h1>
      <ErrorNote error={r.error} />
      {r.loading && !r.data && <p class="muted">Reading events…</p>}
      {r.data && (
        <>
          <dl class="facts" data-testid="attacker-facts">
            <div>
              <dt>First seen</dt>
              <dd>
                {time(oldest?.timestamp)}
                {r.data.more && " (or earlier: only the newest " + num(MAX) + " events are read)"}
              </dd>
            </div>
            <div>
              <dt>Last seen</dt>
              <dd>{time(newest?.timestamp)}</dd>
            </div>
            <div>
              <dt>Events</dt>
              <dd>
                {num(events.length)}
                {r.data.more && "+"} · <a href={`/events?src_ip=${encodeURIComponent(ip)}`}>all in Events</a>
              </dd>
            </div>
            <div>
              <dt>Honeypots</dt>
              <dd>
                {pots.length === 0
                  ? "–"
                  : pots.map(([p, n], i) => (
                      <Fragment key={p}>
                        {i > 0 && ", "}
                        <bdi>
                          <a href={eventsHref({ src_ip: ip, pot_id: p })}>{p}</a>
                        </bdi>{" "}
                        ({n})
                      </Fragment>
                    ))}
              </dd>
            </div>
            <div>
              <dt>Country, network</dt>
              <dd data-testid="attacker-geo">
                {geo ? (
                  <>
                    {geo.country && (
                      <DrillLink kind="country" value={geo.country}>
                        {countryName(geo.country)}
                      </DrillLink>
                    )}
                    {geo.country && geo.asn ? " · " : ""}
                    {geo.asn && (
                      <DrillLink kind="asn" value={String(geo.asn)}>
                        {asName(geo.asn, geo.as_org)}
                      </DrillLink>
                    )}
                  </>
                ) : (
                  <span class="muted">{geoip.data ? "no location for this address (private or unknown)" : geoip.data === false ? "not available on this Core (no GeoIP)" : "–"}</span>
                )}
              </dd>
            </div>
          </dl>
          <div class="grid2">
            <Card title={`Credentials tried (${creds.length})`} id="creds">
              <table class="top" data-testid="credentials">
                <tbody>
                  {creds.length === 0 && (
                    <tr>
                      <td class="muted">none</td>
                    </tr>
                  )}
                  {creds.map(([[username, password], n]) => (
                    <tr key={`${username}\n${password}`}>
                      <td class="mono">
                        <Credentials username={username} password={password} />
                      </td>
                      <td class="n">{n}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Card>
            <Card title={`Commands (${commands.length})`} id="commands">
              <ol class="commands mono" data-testid="commands" reversed>
                {commands.length === 0 && <li class="muted">none</li>}
                {commands.map((e) => (
                  <li key={e.id} title={time(e.timestamp)}>
                    <DrillLink kind="command" value={e.data.input} />
                  </li>
                ))}
              </ol>
            </Card>
            <Card title={`Downloads (${downloads.length})`} id="downloads">
              <ul class="plain mono">
                {downloads.length === 0 && <li class="muted">none</li>}
                {downloads.map((e) => (
                  <li key={e.id}>
                    <bdi>{e.data.url}</bdi>
                    {!failed(e) && typeof e.data.shasum === "string" && (
                      <>
                        {" "}
                        <a href={`/artifacts/${e.data.shasum}`} title={`the artifact ${e.data.shasum}`}>
                          artifact
                        </a>
                      </>
                    )}
                    {failed(e) && (
                      <>
                        {" "}
                        <span class="badge bad">failed</span>
                        {typeof e.data.reason === "string" && <span class="muted">: {e.data.reason}</span>}
                      </>
                    )}
                  </li>
                ))}
              </ul>
            </Card>
          </div>
          <Card title={rs.data ? `Sessions (${rs.data.sessions.length}${rs.data.more ? "+" : ""})` : `Sessions (${sessions.length})`} id="sessions">
            <ErrorNote error={rs.error} />
            {rs.data && <SessionsTable sessions={rs.data.sessions} showAddress={false} />}
            {rs.data?.more && (
              <p class="muted">
                The newest {num(MAX_SESSIONS)} are shown; <a href={`/sessions?src_ip=${encodeURIComponent(ip)}`}>page through all of them</a>.
              </p>
            )}
            {/* A Core without the sessions API: the session ids found in the events. */}
            {rs.data === null && !rs.loading && (
              <ul class="plain mono">
                {sessions.length === 0 && <li class="muted">none</li>}
                {sessions.map(([s, n]) => (
                  <li key={s}>
                    <bdi>{s}</bdi> <span class="muted">{n} events</span>
                  </li>
                ))}
              </ul>
            )}
          </Card>
          <Card title="Every event" id="all">
            <div class="table-wrap">
              <table class="events fit" data-testid="attacker-events">
                <thead>
                  <tr>
                    <th scope="col">time</th>
                    <th scope="col">honeypot</th>
                    <th scope="col">event type</th>
                    <th scope="col">what</th>
                  </tr>
                </thead>
                <tbody>
                  {events.slice(0, 500).map((e) => (
                    <tr key={e.id}>
                      <td class="mono nowrap">{time(e.timestamp)}</td>
                      <td>
                        <DrillLink kind="pot_id" value={e.pot_id} scope={{ src_ip: ip }} />
                      </td>
                      <td class="mono">
                        <DrillLink kind="event_type" value={e.event_type} scope={{ src_ip: ip }} />
                      </td>
                      <td class="ellipsis what">
                        <Summary e={e} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {events.length > 500 && <p class="muted">The newest 500 are shown; <a href={`/events?src_ip=${encodeURIComponent(ip)}`}>page through all of them</a>.</p>}
            </div>
          </Card>
        </>
      )}
    </main>
  );
}
