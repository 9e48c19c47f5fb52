/**
 * Where a sensor stands (PUT /api/v1/nodes/{node_id}/location, issue 34): set by an operator,
 * shown in the node, kept when the node registers again and when Core restarts on its
 * database; refused for a read token, a bad latitude or longitude, an unknown node.
 */
import { expect, test } from "bun:test";
import { sha256 } from "../../src/core/auth";
import { BIG_ID, getJson, registerNode, startTestCore, tempDir } from "../helpers";
import { keptDatabase } from "../helpers/kept-db";

const READ = "hb_read_token_for_node_location_01";
const OPERATOR = "hb_operator_token_for_node_location";

test("an operator sets a node's location; the node shows it, also after it registers again and after a restart", async () => {
  using dir = tempDir();
  await using db = await keptDatabase(dir.path);
  const config = {
    ...db.config,
    tokens: [
      { name: "viewer", role: "read" as const, sha256: sha256(READ) },
      { name: "alice", role: "operator" as const, sha256: sha256(OPERATOR) },
    ],
  };
  let core = await startTestCore(config);
  const put = (token: string, body: unknown, id: string | bigint = BIG_ID) =>
    getJson(`${core.api}/api/v1/nodes/${id}/location`, { method: "PUT", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const node = async () => (await getJson(`${core.api}/api/v1/nodes/${BIG_ID}`, { headers: { authorization: `Bearer ${READ}` } })).body;

  const first = await registerNode(core);
  expect((await node()).location).toBeNull();

  const set = await put(OPERATOR, { lat: 50.11, lon: 8.68, label: " Frankfurt " });
  expect(set.status).toBe(200);
  expect(set.body).toEqual({ lat: 50.11, lon: 8.68, label: "Frankfurt" });
  expect((await node()).location).toEqual({ lat: 50.11, lon: 8.68, label: "Frankfurt" });

  // A registration (the node reconnecting) does not move it.
  first.close();
  const again = await registerNode(core);
  expect((await node()).location).toEqual({ lat: 50.11, lon: 8.68, label: "Frankfurt" });
  expect((await put(OPERATOR, { lat: -33.87, lon: 151.21 })).body).toEqual({ lat: -33.87, lon: 151.21, label: null });
  expect((await node()).location).toEqual({ lat: -33.87, lon: 151.21, label: null });

  for (const bad of [{ lat: 91, lon: 0 }, { lat: 0, lon: -180.5 }, { lat: "50", lon: 8 }, { lon: 8 }]) {
    const r = await put(OPERATOR, bad);
    expect(r.status, JSON.stringify(bad)).toBe(400);
    expect(r.body.error.code).toBe("bad_request");
  }
  const readOnly = await put(READ, { lat: 1, lon: 2 });
  expect(readOnly.status).toBe(403);
  expect((await put(OPERATOR, { lat: 1, lon: 2 }, 42n)).status).toBe(404);
  expect((await put(OPERATOR, { lat: 1, lon: 2 }, "sensor-1")).status).toBe(400);
  // Nothing refused changed it.
  expect((await node()).location).toEqual({ lat: -33.87, lon: 151.21, label: null });

  // Stored with the node: a new Core on the same database shows it before the node is back.
  again.close();
  await core[Symbol.asyncDispose]();
  core = await startTestCore(config);
  try {
    expect((await node()).location).toEqual({ lat: -33.87, lon: 151.21, label: null });
  } finally {
    await core[Symbol.asyncDispose]();
  }
}, 60_000);
