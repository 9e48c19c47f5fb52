/**
 * Nodes: every node with its status and honeypots; a node's page with its honeypots' controls
 * (start, stop, restart, remove), installing from the catalogue with the manifest's settings
 * as a form, and the node's command history with the node's answers. Commands go through
 * POST /api/v1/nodes/{id}/commands; the feed's CommandResult and status messages refresh the
 * page when they come back. A read token sees all of it but the controls. An External pot
 * (events from a honeypot its node did not install) offers only Remove: Core cannot run it.
 */
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { get, post, type CatalogueKind, type CommandRecord, type NodeDetail, type NodeSummary, type Pot } from "../api";
import { Card, DrillLink, ErrorNote, Json, Status, useAsync, useInterval, useMe } from "../components";
import { openFeed } from "../feed";
import { ago, time } from "../format";
import { withRange } from "../timerange";
import { NodeDashboard, potHref } from "./dashboard";
import { NodeHealth } from "./node-health";
import { eventsHref } from "../links";

export function NodesPage() {
  const r = useAsync(() => Promise.all([get<{ nodes: NodeSummary[] }>("/api/v1/nodes"), get<{ honeypots: Pot[] }>("/api/v1/honeypots")]), []);
  useStatusFeed(r.reload);
  const [nodes, pots] = r.data ?? [null, null];
  // Filters take a node's name (REST resolves it) when no other node has it; its id otherwise.
  const named = (n: NodeSummary) => (nodes?.nodes.filter((m) => m.node_name === n.node_name).length === 1 ? n.node_name : n.node_id);
  const potChip = (p: Pot, node: string | null) => (
    <span key={p.pot_id} class="pot">
      <DrillLink kind="pot_id" value={p.pot_id} scope={{ node_id: node }} />{" "}
      <span class="muted">
        (<DrillLink kind="pot_type" value={p.pot_type} />)
      </span>{" "}
      <Status value={p.status} />{" "}
      <a class="small" href={potHref(p)} title={`The dashboard of ${p.pot_id}`}>
        dashboard
      </a>
    </span>
  );
  const kinds = [...new Set(pots?.honeypots.map((p) => p.pot_type))].sort();
  return (
    <main id="main">
      <h1>Nodes</h1>
      <ErrorNote error={r.error} />
      {nodes && nodes.nodes.length === 0 && <p class="muted">No node has registered yet. Start one with <code>honeybee node --core HOST:9001</code>, or <code>honeybee up</code> for Core and a local node together.</p>}
      <div class="table-wrap">
        <table data-testid="nodes">
          <thead>
            <tr>
              <th scope="col">node</th>
              <th scope="col">status</th>
              <th scope="col">type</th>
              <th scope="col">honeypots</th>
            </tr>
          </thead>
          <tbody>
            {pots?.honeypots.some((p) => p.node_id === NO_NODE) && (
              <tr key="no-node" data-testid="no-node">
                <td class="muted">no node</td>
                <td />
                <td />
                <td>
                  {pots.honeypots.filter((p) => p.node_id === NO_NODE).map((p) => potChip(p, null))}
                </td>
              </tr>
            )}
            {nodes?.nodes.map((n) => (
              <tr key={n.node_id}>
                <td>
                  <a href={`/nodes/${n.node_id}`}>{n.node_name}</a>{" "}
                  <a class="small" href={eventsHref({ node_id: named(n) })}>
                    events
                  </a>
                  <div class="muted mono small">{n.node_id}</div>
                </td>
                <td>
                  <Status value={n.status} />
                </td>
                <td>{n.node_type}</td>
                <td>
                  {pots?.honeypots.filter((p) => p.node_id === n.node_id).map((p) => potChip(p, named(n)))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {kinds.length > 0 && (
        <p data-testid="kind-dashboards">
          <span class="muted">Dashboards by kind: </span>
          {kinds.map((k, i) => (
            <Fragment key={k}>
              {i > 0 && " · "}
              <a href={`/kinds/${encodeURIComponent(k)}`}>
                <bdi>{k}</bdi>
              </a>
            </Fragment>
          ))}
        </p>
      )}
    </main>
  );
}

/** Reloads (at most once a second) when a node or pot changes, or a command comes back. */
function useStatusFeed(reload: () => void, node_id?: string) {
  useEffect(() => {
    let t: ReturnType<typeof setTimeout> | undefined;
    const statuses = new Map<string, string>();
    const close = openFeed({
      kinds: ["NodeRegistration", "NodeDrop", "PotStatusUpdate", "NodeStatusUpdate", "CommandResult"],
      node_id,
      onMessage: (kind, p) => {
        // Every heartbeat repeats the node's status: only a change reloads.
        if (kind === "NodeStatusUpdate") {
          if (statuses.get(p?.node_id) === p?.status) return;
          statuses.set(p?.node_id, p?.status);
        }
        t ??= setTimeout(() => ((t = undefined), reload()), 300);
      },
    });
    return () => {
      clearTimeout(t);
      close();
    };
  }, [node_id]);
}

type PotCommand = "DeployPot" | "StopPot" | "RestartPot" | "RemovePot";
/** Node ids as the console reads them (strings); "0" holds the External pots whose events name no node. */
const NO_NODE = "0";

function InstallForm({ nodeId, onSent }: { nodeId: string; onSent: (id: string) => void }) {
  const cat = useAsync(() => get<{ kinds: CatalogueKind[] }>("/api/v1/catalogue"), []);
  const [kind, setKind] = useState("");
  const [potId, setPotId] = useState("");
  const [config, setConfig] = useState<Record<string, string>>({});
  const [autoStart, setAutoStart] = useState(true);
  const [error, setError] = useState<Error | null>(null);
  const k = cat.data?.kinds.find((x) => x.name === kind);
  return (
    <form
      class="install"
      aria-label="Install a honeypot"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        // Settings left at their default are not sent: the node fills them in from the manifest.
        const changed = Object.fromEntries(Object.entries(config).filter(([key, v]) => v !== "" && v !== k?.config[key]?.default));
        try {
          const r = await post<{ command_id: string }>(`/api/v1/nodes/${nodeId}/commands`, { InstallPot: { pot_id: potId, honeypot_type: kind, config: changed, auto_start: autoStart } });
          onSent(r.command_id);
          setPotId("");
        } catch (err) {
          setError(err as Error);
        }
      }}
    >
      <ErrorNote error={cat.error} />
      <div class="row">
        <label>
          Kind
          <select
            name="kind"
            required
            value={kind}
            onChange={(e) => {
              const name = e.currentTarget.value;
              setKind(name);
              const chosen = cat.data?.kinds.find((x) => x.name === name);
              setConfig(Object.fromEntries(Object.entries(chosen?.config ?? {}).map(([key, v]) => [key, v.default])));
              if (!potId) setPotId(name ? `${name}-01` : "");
            }}
          >
            <option value="">choose…</option>
            {cat.data?.kinds.map((x) => (
              <option key={x.name} value={x.name}>
                {x.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Honeypot id
          <input name="pot_id" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}" value={potId} onInput={(e) => setPotId(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={autoStart} onChange={(e) => setAutoStart(e.currentTarget.checked)} /> start after install
        </label>
      </div>
      {k && <p class="muted">{k.description}</p>}
      {k && (
        <fieldset>
          <legend>Settings of {k.name}</legend>
          {Object.entries(k.config).map(([key, v]) => (
            <label key={key} class="setting">
              <span class="mono">{key}</span>
              <input name={key} value={config[key] ?? ""} placeholder={v.default} inputMode={v.port ? "numeric" : undefined} onInput={(e) => setConfig({ ...config, [key]: e.currentTarget.value })} />
              <span class="muted small">{v.description}</span>
            </label>
          ))}
        </fieldset>
      )}
      <ErrorNote error={error} />
      <button type="submit" disabled={!kind || !potId}>
        Install
      </button>
    </form>
  );
}

export function NodePage({ id, query }: { id: string; query: URLSearchParams }) {
  const me = useMe();
  const node = useAsync(() => get<NodeDetail>(`/api/v1/nodes/${encodeURIComponent(id)}`), [id]);
  const commands = useAsync(() => get<{ commands: CommandRecord[] }>(`/api/v1/commands?node_id=${encodeURIComponent(id)}&limit=50`), [id]);
  const [error, setError] = useState<Error | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const reload = () => (node.reload(), commands.reload());
  useStatusFeed(reload, id);
  // "Last seen" moves with heartbeats, which change nothing else.
  useInterval(() => node.reload(), 15_000);
  const operator = me.role === "operator";
  const send = async (command: PotCommand, potId: string, external = false) => {
    const question = external ? `Remove ${potId} from the registry? Core did not install it, so nothing is deleted; it comes back if it sends events again.` : `Remove ${potId}? Its files on the node are deleted; its events stay.`;
    if (command === "RemovePot" && !confirm(question)) return;
    setError(null);
    try {
      await post(`/api/v1/nodes/${encodeURIComponent(id)}/commands`, { [command]: potId });
      commands.reload();
    } catch (e) {
      setError(e as Error);
    }
  };
  const n = node.data;
  return (
    <main id="main" class="node">
      <h1>
        Node <bdi>{n?.node_name ?? ""}</bdi> <span class="muted mono small">{id}</span>
      </h1>
      <ErrorNote error={node.error} />
      {n && (
        <dl class="facts" data-testid="node-facts">
          <div>
            <dt>Status</dt>
            <dd>
              <Status value={n.status} />
            </dd>
          </div>
          <div>
            <dt>Last seen</dt>
            <dd title={time(n.last_seen)}>{n.last_seen ? ago(n.last_seen) : "–"}</dd>
          </div>
          <div>
            <dt>Address</dt>
            <dd class="mono">
              {n.address ?? "–"}
              {n.port ? `:${n.port}` : ""}
            </dd>
          </div>
          <div>
            <dt>Type</dt>
            <dd>{n.node_type}</dd>
          </div>
        </dl>
      )}
      <Card title="Honeypots" id="pots">
        {!operator && <p class="muted">Your token has role read: commands need an operator token.</p>}
        <ErrorNote error={error} />
        <div class="table-wrap">
          <table data-testid="pots">
            <thead>
              <tr>
                <th scope="col">honeypot</th>
                <th scope="col">kind</th>
                <th scope="col">status</th>
                {operator && <th scope="col">actions</th>}
              </tr>
            </thead>
            <tbody>
              {n?.honeypots.length === 0 && (
                <tr>
                  <td colSpan={4} class="muted">
                    No honeypots on this node yet.
                  </td>
                </tr>
              )}
              {n?.honeypots.map((p) => (
                <tr key={p.pot_id} data-pot={p.pot_id}>
                  <td>
                    <a href={potHref({ pot_id: p.pot_id, node_id: id })} title="The honeypot's dashboard">
                      <bdi>{p.pot_id}</bdi>
                    </a>
                  </td>
                  <td>
                    <a href={withRange(`/kinds/${encodeURIComponent(p.pot_type)}`)} title="The dashboard of every honeypot of this kind">
                      <bdi>{p.pot_type}</bdi>
                    </a>
                  </td>
                  <td>
                    <Status value={p.status} />
                    {p.message && (
                      <div class="muted pot-error" data-testid="pot-error">
                        <bdi>{p.message}</bdi>
                      </div>
                    )}
                  </td>
                  {operator && (
                    <td class="actions">
                      {p.status !== "External" && (
                        <>
                          <button type="button" aria-label={`Start ${p.pot_id}`} disabled={p.status === "Running"} onClick={() => send("DeployPot", p.pot_id)}>
                            Start
                          </button>
                          <button type="button" aria-label={`Stop ${p.pot_id}`} disabled={p.status === "Stopped" || p.status === "Failed"} onClick={() => send("StopPot", p.pot_id)}>
                            Stop
                          </button>
                          <button type="button" aria-label={`Restart ${p.pot_id}`} onClick={() => send("RestartPot", p.pot_id)}>
                            Restart
                          </button>
                        </>
                      )}
                      <button type="button" class="danger" aria-label={`Remove ${p.pot_id}`} onClick={() => send("RemovePot", p.pot_id, p.status === "External")}>
                        Remove
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
      {n && <NodeHealth node={n} operator={operator} />}
      {operator && (
        <Card title="Install a honeypot" id="install">
          <InstallForm nodeId={id} onSent={() => commands.reload()} />
        </Card>
      )}
      {n && <NodeDashboard nodeId={id} kinds={[...new Set(n.honeypots.map((p) => p.pot_type))]} query={query} />}
      <Card title="Commands" id="history">
        <ErrorNote error={commands.error} />
        <div class="table-wrap">
          <table data-testid="commands">
            <thead>
              <tr>
                <th scope="col">sent</th>
                <th scope="col">command</th>
                <th scope="col">honeypot</th>
                <th scope="col">status</th>
                <th scope="col">result</th>
                <th scope="col">by</th>
              </tr>
            </thead>
            <tbody>
              {commands.data?.commands.length === 0 && (
                <tr>
                  <td colSpan={6} class="muted">
                    No commands sent to this node yet.
                  </td>
                </tr>
              )}
              {commands.data?.commands.map((c) => (
                <Fragment key={c.command_id}>
                  <tr data-command={c.command}>
                    <td class="mono nowrap">
                      <button type="button" class="link" aria-expanded={open === c.command_id} onClick={() => setOpen(open === c.command_id ? null : c.command_id)} title="Show the command and the node's answer">
                        {time(c.created_at)}
                      </button>
                    </td>
                    <td>{c.command}</td>
                    <td>{c.pot_id ?? "–"}</td>
                    <td>
                      <Status value={c.status} />
                    </td>
                    <td class="ellipsis">{c.message ?? ""}</td>
                    <td class="muted">
                      {c.principal ? `${c.principal} via ${c.source}` : c.source}
                    </td>
                  </tr>
                  {open === c.command_id && (
                    <tr class="json-row">
                      <td colSpan={6}>
                        <Json value={{ body: c.body, data: c.data, remote_addr: c.remote_addr, updated_at: c.updated_at }} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
    </main>
  );
}
