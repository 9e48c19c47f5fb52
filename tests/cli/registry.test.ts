import { describe, expect, test } from "bun:test";
import { BIG_ID, freePort, registerNode, startTestCore } from "../helpers";
import { cli } from "./cli-helpers";

/** A node that reports one pot, and the moment Core has recorded it. */
async function nodeWithPot(core: Awaited<ReturnType<typeof startTestCore>>) {
  const node = await registerNode(core, BIG_ID, "sensor-1");
  const recorded = Promise.withResolvers<void>();
  core.bus.subscribe((m) => m.kind === "PotStatusUpdate" && recorded.resolve());
  node.send("NodeStatusUpdate", { node_id: BIG_ID, status: "Running" });
  node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Running" });
  await recorded.promise;
  return node;
}

describe("nodes, node show, pots", () => {
  test("tables for people, Core's own bodies with exact u64 ids for scripts", async () => {
    await using core = await startTestCore();
    using _node = await nodeWithPot(core);

    const nodes = await cli(["nodes"], core);
    expect(nodes).toMatchObject({ code: 0, stderr: "" });
    expect(nodes.stdout.split("\n")).toEqual([
      "NODE_ID               NAME      STATUS   TYPE  POTS",
      `${BIG_ID}  sensor-1  Running  Full     1`,
      "",
    ]);
    expect((await cli(["nodes", "--json"], core)).json).toEqual({ nodes: [{ node_id: BIG_ID, node_name: "sensor-1", status: "Running", node_type: "Full" }] });
    // The id is written with all its digits: it never passed through a double.
    expect((await cli(["nodes", "--json"], core)).stdout).toContain(`"node_id":${BIG_ID}`);

    const detail = { node_id: BIG_ID, node_name: "sensor-1", status: "Running", node_type: "Full", location: null, address: "127.0.0.1", port: 0, last_seen: expect.any(String), last_heartbeat: expect.any(String), health: null, honeypots: [{ pot_id: "ssh-01", pot_type: "cowrie", status: "Running" }] };
    for (const ref of [String(BIG_ID), "sensor-1"]) {
      expect((await cli(["node", "show", ref, "--json"], core)).json).toEqual(detail);
      const shown = await cli(["node", "show", ref], core);
      expect(shown.code).toBe(0);
      // A node that sends plain heartbeats shows their age, and no figures.
      expect(shown.stdout.replace(/Heartbeat: \d+ s ago/, "Heartbeat: N s ago")).toBe(
        [`Node:      ${BIG_ID}`, "Name:      sensor-1", "Status:    Running", "Type:      Full", "Heartbeat: N s ago", "", "POT     TYPE    STATUS", "ssh-01  cowrie  Running", ""].join("\n"),
      );
    }

    const pots = await cli(["pots"], core);
    expect(pots.stdout).toBe(["POT     TYPE    STATUS   NODE      NODE_ID", `ssh-01  cowrie  Running  sensor-1  ${BIG_ID}`, ""].join("\n"));
    expect((await cli(["pots", "--json", "--node", "sensor-1"], core)).json).toEqual({ honeypots: [{ node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Running" }] });
    expect((await cli(["honeypots", "--json"], core)).json.honeypots).toHaveLength(1);

    // Where the sensor stands, for the console's attack map (issue 34): south and west are negative.
    expect(await cli(["node", "locate", "sensor-1", "-33.87", "-70.5", "--label", "Santiago"], core)).toMatchObject({ code: 0, stdout: `sensor-1 (${BIG_ID}) stands at -33.87, -70.5 (Santiago)\n` });
    expect((await cli(["node", "show", "sensor-1", "--json"], core)).json.location).toEqual({ lat: -33.87, lon: -70.5, label: "Santiago" });
    const bad = await cli(["node", "locate", "sensor-1", "91", "0"], core);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("expected degrees from -90 to 90") });
  });

  test("an empty registry says what to do next", async () => {
    await using core = await startTestCore();
    expect(await cli(["nodes"], core)).toMatchObject({ code: 0, stdout: 'No nodes yet. Start one with "honeybee up", or "honeybee node --core HOST:9001" on a sensor.\n' });
    expect((await cli(["pots"], core)).stdout).toStartWith("No honeypots yet.");
    expect((await cli(["nodes", "--json"], core)).json).toEqual({ nodes: [] });
  });

  test("--api and --ws flags win over HONEYBEE_API and HONEYBEE_WS", async () => {
    await using core = await startTestCore();
    const dead = `http://127.0.0.1:${freePort()}`;
    const res = await cli(["nodes", "--json", "--api", core.api], undefined, { HONEYBEE_API: dead });
    expect(res).toMatchObject({ code: 0, json: { nodes: [] } });
  });
});

describe("errors: one line that says what to do, and an exit code scripts can trust", () => {
  test("Core unreachable: exit 1", async () => {
    const api = `http://127.0.0.1:${freePort()}`;
    for (const args of [["nodes"], ["nodes", "--json"], ["node", "show", "sensor-1"], ["pots"]]) {
      const res = await cli(args, { api, ws: "ws://127.0.0.1:1" });
      expect({ args, code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({
        args,
        code: 1,
        stdout: "",
        stderr: `honeybee: cannot reach Core at ${api} (connection refused); start it with "honeybee up" (or "honeybee core"), or point --api / HONEYBEE_API at it\n`,
      });
    }
  });

  test("unknown node: exit 1", async () => {
    await using core = await startTestCore();
    using _node = await nodeWithPot(core);
    expect(await cli(["node", "show", "42"], core)).toMatchObject({ code: 1, stdout: "", stderr: 'honeybee: node 42 is not registered; list the nodes with "honeybee nodes"\n' });
    expect(await cli(["node", "show", "nope", "--json"], core)).toMatchObject({ code: 1, stdout: "", stderr: 'honeybee: no node is named "nope"; list the nodes with "honeybee nodes"\n' });
    expect((await cli(["pots", "--node", "nope"], core)).code).toBe(1);
  });

  test("bad flags and arguments: exit 2 before anything is sent", async () => {
    const cases: [string[], string][] = [
      [["nodes", "--bogus"], `honeybee: unknown option '--bogus'; see "honeybee nodes --help"`],
      [["node", "show"], `honeybee: missing required argument 'node'; see "honeybee node show --help"`],
      [["node", "show", "a", "b"], `honeybee: too many arguments for 'show'. Expected 1 argument but got 2; see "honeybee node show --help"`],
      [["nodes", "--api", "localhost:9002"], `honeybee: --api must start with http:// or https://, got "localhost:9002"; see "honeybee nodes --help"`],
      [["pots", "--ws", "http://127.0.0.1:9003"], `honeybee: --ws must start with ws:// or wss://, got "http://127.0.0.1:9003"; see "honeybee pots --help"`],
    ];
    for (const [args, stderr] of cases) {
      const res = await cli(args, { api: "http://127.0.0.1:1", ws: "ws://127.0.0.1:1" });
      expect({ args, code: res.code, stderr: res.stderr }).toEqual({ args, code: 2, stderr: stderr + "\n" });
    }
  });
});
