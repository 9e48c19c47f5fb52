/**
 * Human output of the management commands: pure functions from API bodies to text, so that the
 * shapes are tested without a network and every command prints them the same way.
 */
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
