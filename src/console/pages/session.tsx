/**
 * One session: where and when, the credentials tried, the commands (marked when the shell did
 * not know them), the files it fetched or left (linked to their artifact pages when Core holds
 * them), its terminal recording played in the page, and every event in order.
 */
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { ApiError, get, type EventRecord } from "../api";
import { Card, Credentials, DrillLink, ErrorNote, Json, Summary, useAsync } from "../components";
import { num, time } from "../format";
import { attackerHref } from "../links";
import { Player } from "../sessions/player";
import { SessionsTable } from "../sessions/table";
import { duration, type SessionDetail, type SessionSummary } from "../sessions/types";

/** The SHA-256s of the files Core holds for this session; empty on a Core without the artifacts API. */
async function artifacts(session: string): Promise<Set<string>> {
  try {
    const r = await get<{ artifacts: { sha256: string }[] }>(`/api/v1/artifacts?session=${encodeURIComponent(session)}&limit=500`);
    return new Set(r.artifacts.map((a) => a.sha256));
  } catch {
    return new Set();
  }
}

type Loaded = { s: SessionDetail; held: Set<string>; choices?: undefined } | { s?: undefined; held?: undefined; choices: SessionSummary[] };

/**
 * `id` is Core's session id or the honeypot's session hash (what tables and events show, and
 * what the CLI accepts): a hash is looked up with `?session=`; when several honeypots gave the
 * same hash, the page lists them.
 */
async function load(id: string): Promise<Loaded | null> {
  if (!/^[0-9]+$/.test(id)) {
    const found = (await get<{ sessions: SessionSummary[] }>(`/api/v1/sessions?session=${encodeURIComponent(id)}&limit=100`)).sessions;
    if (found.length === 0) return null;
    if (found.length > 1) return { choices: found };
    id = String(found[0]!.id);
  }
  try {
    const s = await get<SessionDetail>(`/api/v1/sessions/${encodeURIComponent(id)}`);
    return { s, held: s.file_events.length ? await artifacts(s.session) : new Set() };
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

export function SessionPage({ id }: { id: string }) {
  const r = useAsync(() => load(id), [id]);
  const [open, setOpen] = useState<number | null>(null);
  const s = r.data?.s;
  return (
    <main id="main" class="attacker">
      <h1>
        Session <bdi class="mono">{s ? s.session : id}</bdi>
      </h1>
      <ErrorNote error={r.error} />
      {r.loading && !r.data && <p class="muted">Reading the session…</p>}
      {r.data === null && !r.loading && !r.error && <p class="muted">Core has no session {id}. Sessions are listed on <a href="/sessions">Sessions</a>.</p>}
      {r.data?.choices && (
        <>
          <p class="muted">Several honeypots gave a session the id {id}: pick one.</p>
          <SessionsTable sessions={r.data.choices} />
        </>
      )}
      {s && (
        <>
          <dl class="facts" data-testid="session-facts">
            <div>
              <dt>Address</dt>
              <dd class="mono">{s.src_ip ? <a href={attackerHref(s.src_ip)}>{s.src_ip}</a> : "–"}</dd>
            </div>
            <div>
              <dt>Start</dt>
              <dd>{time(s.start)}</dd>
            </div>
            <div>
              <dt>End</dt>
              <dd>
                {time(s.end)}
                {!s.closed && " (still open)"}
              </dd>
            </div>
            <div>
              <dt>Duration</dt>
              <dd>{duration(s.duration)}</dd>
            </div>
            <div>
              <dt>Honeypot</dt>
              <dd>
                <DrillLink kind="pot_id" value={s.pot_id} scope={{ node_id: s.node_id }} />{" "}
                {s.pot_type && (
                  <span class="muted">
                    (<DrillLink kind="pot_type" value={s.pot_type} />)
                  </span>
                )}{" "}
                on {s.node_id ? <a href={`/nodes/${s.node_id}`}>node {s.node_id}</a> : "–"}
              </dd>
            </div>
            <div>
              <dt>Events</dt>
              <dd>{num(Number(s.events))}</dd>
            </div>
          </dl>
          <div class="grid2">
            <Card title={`Credentials tried (${s.credentials.length})`} id="creds">
              <table class="top" data-testid="credentials">
                <tbody>
                  {s.credentials.length === 0 && (
                    <tr>
                      <td class="muted">none</td>
                    </tr>
                  )}
                  {s.credentials.map((c, i) => (
                    <tr key={i} title={time(c.timestamp)}>
                      <td class="mono">
                        <Credentials username={c.username} password={c.password} />
                      </td>
                      <td>{c.success ? <span class="badge ok">accepted</span> : <span class="badge bad">refused</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Card>
            <Card title={`Commands (${s.command_lines.length})`} id="commands">
              <ol class="commands mono" data-testid="commands">
                {s.command_lines.length === 0 && <li class="muted">none</li>}
                {s.command_lines.map((c, i) => (
                  <li key={i} title={time(c.timestamp)}>
                    <DrillLink kind="command" value={c.input} />
                    {!c.found && (
                      <span class="badge bad" title="the shell answered: command not found">
                        not found
                      </span>
                    )}
                  </li>
                ))}
              </ol>
            </Card>
          </div>
          <Card title={`Files (${s.file_events.length})`} id="files">
            <div class="table-wrap">
              <table class="events" data-testid="files">
                <thead>
                  <tr>
                    <th scope="col">time</th>
                    <th scope="col">how</th>
                    <th scope="col">URL or name</th>
                    <th scope="col">SHA-256</th>
                  </tr>
                </thead>
                <tbody>
                  {s.file_events.length === 0 && (
                    <tr>
                      <td colSpan={4} class="muted">
                        none
                      </td>
                    </tr>
                  )}
                  {s.file_events.map((f, i) => (
                    <tr key={i}>
                      <td class="mono nowrap">{time(f.timestamp)}</td>
                      <td>{f.event_type.endsWith("upload") ? "upload" : "download"}</td>
                      <td class="mono ellipsis">
                        <bdi>{f.url ?? f.filename ?? f.outfile ?? "–"}</bdi>
                      </td>
                      <td class="mono ellipsis">
                        {f.shasum && r.data?.held?.has(f.shasum) ? (
                          <a href={`/artifacts/${f.shasum}`} title="the artifact's page: its type, every sighting, the download">
                            {f.shasum}
                          </a>
                        ) : (
                          (f.shasum ?? "–")
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
          <Card title="Terminal recording" id="recording">
            {s.recording_file?.received ? (
              <Player id={String(s.id)} />
            ) : (
              <p class="muted" data-testid="no-recording">{noRecording(s)}</p>
            )}
          </Card>
          <Card title={`Events (${s.session_events.length}${s.truncated ? ", the first ones" : ""})`} id="events">
            <div class="table-wrap">
              <table class="events" data-testid="session-events">
                <thead>
                  <tr>
                    <th scope="col">time</th>
                    <th scope="col">event type</th>
                    <th scope="col">what</th>
                  </tr>
                </thead>
                <tbody>
                  {s.session_events.map((e: EventRecord) => (
                    <Fragment key={e.id}>
                      <tr class={open === e.id ? "open" : ""}>
                        <td class="mono nowrap">
                          <button type="button" class="link" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)} title="Show the whole event">
                            {time(e.timestamp)}
                          </button>
                        </td>
                        <td class="mono">
                          <DrillLink kind="event_type" value={e.event_type} scope={{ src_ip: s.src_ip }} />
                        </td>
                        <td class="ellipsis">
                          <Summary e={e} />
                        </td>
                      </tr>
                      {open === e.id && (
                        <tr class="json-row">
                          <td colSpan={3}>
                            <Json value={e} />
                          </td>
                        </tr>
                      )}
                    </Fragment>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
        </>
      )}
    </main>
  );
}

/** Why there is nothing to play, as the recording's REST answer words it (docs/sessions.md). */
function noRecording(s: { recording: boolean; node_id: unknown }): string {
  if (!s.recording) return "No recording: the session never reached a shell.";
  if (!s.node_id) return "The honeypot recorded this session, but its events came to Core directly, with no node: there is no path for the recording to reach Core (relay the honeypot through a node, with --pot-dir for a Cowrie of your own).";
  return "The honeypot recorded this session; the node has not sent the recording yet.";
}
