/**
 * Human output of the management commands: pure functions from API bodies to text, so that the
 * shapes are tested without a network and every command prints them the same way.
 */
import { byteSize } from "../bytes";
import { NO_NODE } from "../protocol/types";
import type { Node, NodeDetail, Pot } from "./client";
import { clean, renderFields, renderTable, type Column } from "./table";

const byName = <T extends { node_name: string; node_id: bigint }>(a: T, b: T) =>
  a.node_name.localeCompare(b.node_name) || (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0);

export function nodesTable(nodes: Node[], pots: Pot[], width?: number): string {
  if (nodes.length === 0) return 'No nodes yet. Start one with "honeybee up", or "honeybee node --core HOST:9001" on a sensor.';
  const count = new Map<bigint, number>();
  for (const p of pots) count.set(p.node_id, (count.get(p.node_id) ?? 0) + 1);
  const columns: Column<Node>[] = [
    { header: "NODE_ID", value: (n) => n.node_id.toString() },
    { header: "NAME", value: (n) => n.node_name, shrink: true },
    { header: "STATUS", value: (n) => n.status },
    { header: "TYPE", value: (n) => n.node_type },
    { header: "POTS", value: (n) => String(count.get(n.node_id) ?? 0), right: true },
  ];
  return renderTable(columns, [...nodes].sort(byName), width);
}

export function nodeDetail(node: NodeDetail, width?: number): string {
  const fields = renderFields([
    ["Node", node.node_id.toString()],
    ["Name", node.node_name],
    ["Status", node.status],
    ["Type", node.node_type],
    ...healthFields(node),
  ]);
  if (node.honeypots.length === 0) return `${fields}\n\nNo honeypots. Install one with: honeybee install ${node.node_id} cowrie --pot-id ssh-01 --start`;
  const pots = [...node.honeypots].sort((a, b) => a.pot_id.localeCompare(b.pot_id));
  const table = renderTable(
    [
      { header: "POT", value: (p) => p.pot_id },
      { header: "TYPE", value: (p) => p.pot_type },
      { header: "STATUS", value: (p) => p.status },
    ],
    pots,
    width,
  );
  return `${fields}\n\n${table}`;
}

/** "3 d 4 h", "2 h 5 min", "42 s": an uptime. */
function uptime(s: number): string {
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** The figures of the node's heartbeats (NodeStatusUpdate `health`), each when the node sent it. */
function healthFields(node: NodeDetail, now = Date.now()): [string, string][] {
  const h = node.health;
  const out: [string, string][] = [];
  if (node.last_heartbeat) out.push(["Heartbeat", `${Math.max(0, Math.round((now - Date.parse(node.last_heartbeat)) / 1000))} s ago`]);
  if (!h) return out;
  if (h.agent_version) out.push(["Agent", `v${h.agent_version}${h.uptime_s !== undefined ? `, up ${uptime(h.uptime_s)}` : ""}`]);
  if (h.host_uptime_s !== undefined) out.push(["Host up", uptime(h.host_uptime_s)]);
  const cpu = [h.cpu_percent !== undefined ? `${h.cpu_percent}% used` : null, h.cpus !== undefined ? `${h.cpus} CPU(s)` : null, h.load_1m !== undefined ? `load ${h.load_1m}` : null];
  if (cpu.some(Boolean)) out.push(["CPU", cpu.filter(Boolean).join(", ")]);
  if (h.mem_total_bytes !== undefined && h.mem_available_bytes !== undefined) out.push(["Memory", `${byteSize(h.mem_total_bytes - h.mem_available_bytes)} used of ${byteSize(h.mem_total_bytes)}`]);
  if (h.disk_total_bytes !== undefined && h.disk_free_bytes !== undefined) out.push(["Disk", `${byteSize(h.disk_free_bytes)} free of ${byteSize(h.disk_total_bytes)}`]);
  return out;
}

export function potsTable(pots: Pot[], nodes: Node[], width?: number): string {
  if (pots.length === 0) return 'No honeypots yet. Install one with "honeybee install NODE cowrie --pot-id ssh-01 --start".';
  const names = new Map(nodes.map((n) => [n.node_id, n.node_name]));
  const rows = pots.map((p) => ({ ...p, node_name: names.get(p.node_id) ?? (p.node_id === NO_NODE ? "(no node)" : "?") }));
  rows.sort((a, b) => byName(a, b) || a.pot_id.localeCompare(b.pot_id));
  return renderTable(
    [
      { header: "POT", value: (p) => p.pot_id },
      { header: "TYPE", value: (p) => p.pot_type },
      { header: "STATUS", value: (p) => p.status },
      { header: "NODE", value: (p) => p.node_name, shrink: true },
      { header: "NODE_ID", value: (p) => p.node_id.toString() },
    ],
    rows,
    width,
  );
}

/** "local (18446744073709551557)": how progress lines name a node. */
export const nodeLabel = (n: Pick<Node, "node_id" | "node_name">) => `${clean(n.node_name)} (${n.node_id})`;
