import { expect, test } from "bun:test";
import type { BusMessage } from "../../src/core/bus";
import { stringify } from "../../src/protocol/json";
import { BIG_ID, getJson, registerNode, startTestCore, until } from "../helpers";
import { onCluster } from "../helpers/postgres";

test("PotEvent (both styles), PotLog and NodeEvent from the control channel go through the same pipeline and onto the bus", async () => {
  await using core = await startTestCore();
  const published: BusMessage[] = [];
  core.bus.subscribe((m) => m.kind === "PotEvent" && published.push(m));
  using node = await registerNode(core);
  node.send("PotEvent", { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", event_type: "cowrie.login.failed", timestamp: "2026-11-22T01:00:00Z", data: { src_ip: "198.51.100.4", username: "root" } });
  node.send("PotEvent", { pot_id: "ssh-1", event: "custom.alert", message: "too many logins", metadata: { src_ip: "198.51.100.5" }, timestamp: 1795309499 });
  node.send("PotLog", { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", log_type: "stdout", data: "listening on 2222", timestamp: 1795309499000 });
  node.send("NodeEvent", { Alarm: { description: "disk 95% full" } });
  node.send("PotEvent", { pot_id: "ssh-1" });
  const error = await node.nextKind("Error");
  expect(error.code).toBe("invalid_event");

  await until(() => published.length === 4, "4 events published");
  const list = (await getJson(`${core.api}/api/v1/events`)).body.events as any[];
  expect(list.map((e) => [e.event_type, e.node_id, e.pot_id, e.src_ip])).toEqual([
    ["node.alarm", BIG_ID, null, null],
    ["log.stdout", BIG_ID, "ssh-1", null],
    ["custom.alert", BIG_ID, "ssh-1", "198.51.100.5"],
    ["cowrie.login.failed", BIG_ID, "ssh-1", "198.51.100.4"],
  ]);
  expect(list[0].data).toEqual({ description: "disk 95% full" });
  // Published after commit, with the id it was stored under and the meta the live feed filters on.
  // The feed's frame is written by the pipeline; the payload is read from it.
  const payload = { id: 1, node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", event_type: "cowrie.login.failed", timestamp: "2026-11-22T01:00:00.000Z", src_ip: "198.51.100.4", data: { username: "root" } };
  expect({ kind: published[0]!.kind, payload: published[0]!.payload, meta: published[0]!.meta }).toEqual({
    kind: "PotEvent",
    payload,
    meta: { node_id: BIG_ID, pot_id: "ssh-1", event_type: "cowrie.login.failed" },
  });
  // Alone, the pipeline writes the feed's frame itself; in a cluster the event comes from the
  // writers over the bus as a payload, and the proxy frames it.
  if (!onCluster()) expect(published[0]!.frame).toBe(stringify({ version: 2, message: { PotEvent: payload } }));
  expect((await getJson(`${core.api}/api/v1/stats`)).body.ingest).toMatchObject({ received: 5, committed: 4, rejected: 1 });
});
