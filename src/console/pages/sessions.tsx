/**
 * Sessions: lights up when Core serves GET /api/v1/sessions (probed); otherwise says the API
 * is missing. Shows what the API returns, never made-up data.
 */
import { ApiError, get, probe } from "../api";
import { ErrorNote, Json, Unavailable, useAsync } from "../components";
import { time } from "../format";

type Session = Record<string, unknown>;

const idOf = (s: Session) => String(s.id ?? s.session_id ?? s.session ?? "");
const SCALAR = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);

export function SessionsPage() {
  const r = useAsync(async () => {
    if (!(await probe("/api/v1/sessions?limit=1"))) return null;
    return get<{ sessions: Session[] }>("/api/v1/sessions?limit=100");
  }, []);
  if (r.data === null && !r.loading && !r.error) {
    return (
      <main id="main">
        <h1>Sessions</h1>
        <Unavailable what="Sessions" api="GET /api/v1/sessions" />
        <p>
          Meanwhile, an attacker's sessions are listed on their page: follow an address from <a href="/events">Events</a> or the <a href="/">Overview</a>.
        </p>
      </main>
    );
  }
  const rows = r.data?.sessions ?? [];
  const cols = [...new Set(rows.flatMap((s) => Object.keys(s).filter((k) => SCALAR(s[k]))))].slice(0, 8);
  return (
    <main id="main">
      <h1>Sessions</h1>
      <ErrorNote error={r.error} />
      <div class="table-wrap">
        <table data-testid="sessions">
          <thead>
            <tr>
              {cols.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <tr key={idOf(s)}>
                {cols.map((c, i) => (
                  <td key={c} class="mono">
                    {i === 0 ? <a href={`/sessions/${encodeURIComponent(idOf(s))}`}>{String(s[c] ?? "")}</a> : /(_at|time|start|end)/.test(c) ? time(s[c] as string) : String(s[c] ?? "")}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </main>
  );
}

export function SessionPage({ id }: { id: string }) {
  const r = useAsync(async () => {
    try {
      return await get<Session>(`/api/v1/sessions/${encodeURIComponent(id)}`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && /no such path/.test(e.message)) return null;
      throw e;
    }
  }, [id]);
  return (
    <main id="main">
      <h1>
        Session <span class="mono">{id}</span>
      </h1>
      <ErrorNote error={r.error} />
      {r.data === null && !r.loading && !r.error && (
        <>
          <Unavailable what="Session details" api="GET /api/v1/sessions/{id}" />
          <p>
            The session's events are in <a href={`/events`}>Events</a>; cowrie writes the session id into each event's <code>data.session</code>.
          </p>
        </>
      )}
      {r.data && <Json value={r.data} />}
    </main>
  );
}
