/**
 * A node's health on its page: the figures its heartbeats carry (agent version and uptime,
 * the host's CPU, memory and disk; GET /api/v1/nodes/{id} `health`) with the last heartbeat's
 * age, and per honeypot its status, restarts, CPU, memory, uptime and events relayed
 * (GetPotMetrics) and its last log lines (GetPotLogs, fetched when the operator opens them).
 * Both are commands to the node (POST /api/v1/nodes/{id}/commands, the answer from
 * GET /api/v1/commands/{id}), so a read token sees the node's figures only.
 */
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { byteSize } from "../../bytes";
import type { PotLogsData, PotMetricsData } from "../../protocol/command-data";
import { get, post, type CommandRecord, type NodeDetail } from "../api";
import { Card, ErrorNote, Status, useInterval } from "../components";
import { ago, num, time } from "../format";
import { duration } from "../sessions/types";

type Health = NonNullable<NodeDetail["health"]>;

/** Sends a command to the node and waits for its answer (the record once it succeeded or failed). */
async function ask<T>(nodeId: string, command: Record<string, unknown>, timeoutMs = 15_000): Promise<T> {
  const { command_id } = await post<{ command_id: string }>(`/api/v1/nodes/${encodeURIComponent(nodeId)}/commands`, command);
  const until = Date.now() + timeoutMs;
  for (let wait = 100; Date.now() < until; wait = Math.min(wait * 2, 1000)) {
    await new Promise((r) => setTimeout(r, wait));
    const rec = await get<CommandRecord>(`/api/v1/commands/${encodeURIComponent(command_id)}`);
    if (rec.status === "succeeded") return rec.data as T;
    if (rec.status === "failed") throw new Error(rec.message ?? "the node could not answer");
  }
  throw new Error(`no answer from the node within ${timeoutMs / 1000} s`);
}

const bytes = (n: number | null | undefined) => (n === null || n === undefined ? "–" : byteSize(n));
const percent = (n: number | null | undefined) => (n === null || n === undefined ? "–" : `${n.toFixed(1)}%`);

/** The uptime now: the reported one plus the time since it was reported. */
const upNow = (s: number | undefined, h: Health, now: number) => (s === undefined ? "–" : duration(s + Math.max(0, (now - Date.parse(h.reported_at)) / 1000)));

function NodeFigures({ node, now }: { node: NodeDetail; now: number }) {
  const h = node.health;
  const beat = node.last_heartbeat;
  return (
    <dl class="facts" data-testid="node-health">
      <div>
        <dt>Last heartbeat</dt>
        <dd title={time(beat)} data-testid="heartbeat">
          {beat ? ago(beat, now) : "–"}
        </dd>
      </div>
      {!h && (
        <div class="wide">
          <dt>Figures</dt>
          <dd class="muted">This node sends no figures with its heartbeats (an older node agent): update it to see its version, CPU, memory and disk here.</dd>
        </div>
      )}
      {h && (
        <>
          <div>
            <dt>Agent</dt>
            <dd data-testid="agent-version">{h.agent_version ? `v${h.agent_version}` : "–"}</dd>
          </div>
          <div>
            <dt>Agent uptime</dt>
            <dd data-testid="agent-uptime">{upNow(h.uptime_s, h, now)}</dd>
          </div>
          <div>
            <dt>Host uptime</dt>
            <dd>{upNow(h.host_uptime_s, h, now)}</dd>
          </div>
          <div>
            <dt>CPU</dt>
            <dd data-testid="cpu" title="Use of all the host's CPUs since the previous heartbeat, and the 1-minute load average">
              {percent(h.cpu_percent)}
              {h.cpus !== undefined && <span class="muted"> of {h.cpus} CPU(s)</span>}
              {h.load_1m !== undefined && <span class="muted">, load {h.load_1m}</span>}
            </dd>
          </div>
          <div>
            <dt>Memory</dt>
            <dd data-testid="memory">
              {h.mem_total_bytes !== undefined && h.mem_available_bytes !== undefined ? `${byteSize(h.mem_total_bytes - h.mem_available_bytes)} used of ${byteSize(h.mem_total_bytes)}` : "–"}
              {h.agent_rss_bytes !== undefined && <div class="muted small">agent {byteSize(h.agent_rss_bytes)}</div>}
            </dd>
          </div>
          <div>
            <dt>Disk (data directory)</dt>
            <dd data-testid="disk">{h.disk_total_bytes !== undefined && h.disk_free_bytes !== undefined ? `${byteSize(h.disk_free_bytes)} free of ${byteSize(h.disk_total_bytes)}` : "–"}</dd>
          </div>
        </>
      )}
    </dl>
  );
}

function PotLogs({ nodeId, potId }: { nodeId: string; potId: string }) {
  const [logs, setLogs] = useState<PotLogsData | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const load = () => {
    setError(null);
    ask<PotLogsData>(nodeId, { GetPotLogs: potId }).then(setLogs, setError);
  };
  useEffect(load, [nodeId, potId]);
  return (
    <div data-testid="pot-logs">
      <ErrorNote error={error} />
      {!logs && !error && <p class="muted">Asking the node…</p>}
      {logs &&
        (["stdout", "stderr", "install"] as const).map((f) => (
          <Fragment key={f}>
            <h3 class="small">
              {f} <span class="muted">({logs[f].length === 0 ? "empty" : `last ${logs[f].length} lines`})</span>
            </h3>
            {logs[f].length > 0 && (
              <pre class="json" data-log={f}>
                {logs[f].join("\n")}
              </pre>
            )}
          </Fragment>
        ))}
      <button type="button" onClick={load}>
        Reload the log
      </button>
    </div>
  );
}

const COLUMNS = ["honeypot", "status", "restarts", "CPU", "memory", "uptime", "events relayed", "log"];

function PotMetrics({ node }: { node: NodeDetail }) {
  const pots = node.honeypots.filter((p) => p.status !== "External");
  const [metrics, setMetrics] = useState<Record<string, PotMetricsData | Error>>({});
  const [open, setOpen] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  // A pot's status change (a restart, a crash) is when its figures move: they are asked again then.
  const statuses = pots.map((p) => `${p.pot_id}=${p.status}`).join(",");
  useEffect(() => {
    let live = true;
    for (const p of pots) {
      ask<PotMetricsData>(node.node_id, { GetPotMetrics: p.pot_id }).then(
        (m) => live && setMetrics((all) => ({ ...all, [p.pot_id]: m })),
        (e) => live && setMetrics((all) => ({ ...all, [p.pot_id]: e as Error })),
      );
    }
    return () => {
      live = false;
    };
  }, [node.node_id, statuses, tick]);
  if (pots.length === 0) return <p class="muted">No honeypots installed on this node.</p>;
  return (
    <>
      <div class="table-wrap">
        <table data-testid="pot-health">
          <thead>
            <tr>
              {COLUMNS.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {pots.map((p) => {
              const m = metrics[p.pot_id];
              const ok = m && !(m instanceof Error) ? m : null;
              return (
                <Fragment key={p.pot_id}>
                  <tr data-pot={p.pot_id}>
                    <td>
                      <bdi>{p.pot_id}</bdi>
                    </td>
                    <td>
                      <Status value={ok?.status ?? p.status} />
                    </td>
                    <td data-testid="restarts">{ok ? num(ok.restarts) : "–"}</td>
                    <td title={ok?.cpu_seconds != null ? `${ok.cpu_seconds} s of CPU since it started` : undefined}>{percent(ok?.cpu_percent)}</td>
                    <td title={ok?.processes != null ? `${ok.processes} process(es)` : undefined}>{bytes(ok?.rss_bytes)}</td>
                    <td>{duration(ok?.uptime_s)}</td>
                    <td>{ok ? num(ok.events_relayed) : "–"}</td>
                    <td>
                      <button type="button" class="link" aria-expanded={open === p.pot_id} aria-label={`Last log lines of ${p.pot_id}`} onClick={() => setOpen(open === p.pot_id ? null : p.pot_id)}>
                        {open === p.pot_id ? "Hide" : "Last log lines"}
                      </button>
                    </td>
                  </tr>
                  {m instanceof Error && (
                    <tr>
                      <td colSpan={COLUMNS.length}>
                        <ErrorNote error={m} />
                      </td>
                    </tr>
                  )}
                  {open === p.pot_id && (
                    <tr class="json-row">
                      <td colSpan={COLUMNS.length}>
                        <PotLogs nodeId={node.node_id} potId={p.pot_id} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
      <button type="button" onClick={() => setTick((t) => t + 1)}>
        Refresh the honeypots' figures
      </button>
    </>
  );
}

/** The Health section of a node's page. */
export function NodeHealth({ node, operator }: { node: NodeDetail; operator: boolean }) {
  const [now, setNow] = useState(Date.now());
  useInterval(() => setNow(Date.now()), 5000);
  return (
    <Card title="Health" id="health">
      <NodeFigures node={node} now={now} />
      {operator ? (
        node.status === "Connected" || node.status === "Running" ? (
          <PotMetrics node={node} />
        ) : (
          <p class="muted">The node is not connected: its honeypots' figures and logs come from the node itself.</p>
        )
      ) : (
        <p class="muted">Your token has role read: the honeypots' figures and log lines are asked from the node with commands, which need an operator token.</p>
      )}
    </Card>
  );
}
