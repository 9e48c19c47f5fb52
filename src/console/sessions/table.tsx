/** A table of sessions, shared by /sessions and /attackers/{ip}. */
import { Credentials, DrillLink } from "../components";
import { num, time } from "../format";
import { attackerHref } from "../links";
import { duration, type SessionSummary } from "./types";

export function SessionsTable({ sessions, showAddress = true }: { sessions: SessionSummary[]; showAddress?: boolean }) {
  const cols = showAddress ? 9 : 8;
  return (
    <div class="table-wrap">
      <table class="sessions nowrap" data-testid="sessions">
        <thead>
          <tr>
            <th scope="col">start</th>
            {showAddress && <th scope="col">address</th>}
            <th scope="col">honeypot</th>
            <th scope="col">login</th>
            <th scope="col" class="n">
              commands
            </th>
            <th scope="col" class="n">
              files
            </th>
            <th scope="col" class="n">
              duration
            </th>
            <th scope="col">recorded</th>
            <th scope="col">session</th>
          </tr>
        </thead>
        <tbody>
          {sessions.length === 0 && (
            <tr>
              <td colSpan={cols} class="muted">
                No sessions match.
              </td>
            </tr>
          )}
          {sessions.map((s) => (
            <tr key={s.id} data-session={s.session}>
              <td class="mono nowrap">
                <a href={`/sessions/${encodeURIComponent(String(s.id))}`}>{time(s.start)}</a>
              </td>
              {showAddress && <td class="mono">{s.src_ip ? <a href={attackerHref(s.src_ip)}>{s.src_ip}</a> : "–"}</td>}
              {/* The pot's events on its node (the node's 64-bit id is long: not shown). */}
              <td>
                <DrillLink kind="pot_id" value={s.pot_id} scope={{ node_id: s.node_id }} />
              </td>
              <td class="mono login-cell">{s.login_success ? <Credentials username={s.username} password={s.password} /> : <span class="muted">no login</span>}</td>
              <td class="n">{num(Number(s.commands))}</td>
              <td class="n">{num(Number(s.files))}</td>
              <td class="n nowrap">{duration(s.duration)}</td>
              <td>{s.recording ? "yes" : <span class="muted">no</span>}</td>
              <td class="mono">
                <a href={`/sessions/${encodeURIComponent(String(s.id))}`}>{s.session}</a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
