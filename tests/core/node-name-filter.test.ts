import { expect, test } from "bun:test";
import { BIG_ID, EventStreamClient, getJson, registerNode, settled, startTestCore } from "../helpers";

test("the events and sessions filters take a node's name as well as its id; an unknown or shared name is a 400 that says so", async () => {
  await using core = await startTestCore();
  using a = await registerNode(core, BIG_ID, "edge-fra");
  using b = await registerNode(core, 42n, "twin");
  using c = await registerNode(core, 43n, "twin");
  const relayed = await EventStreamClient.connect(core.ports.event, { node_id: BIG_ID, acks: true });
  relayed.send([JSON.stringify({ eventid: "cowrie.session.connect", session: "abc123", src_ip: "203.0.113.9", honeybee_honeypot_id: "ssh-01" })]);
  await relayed.ack(1);
  await settled(core);
  relayed.socket.end();

  const events = await getJson(`${core.api}/api/v1/events?node_id=edge-fra`);
  expect([events.status, events.body.events.length]).toEqual([200, 1]);
  const sessions = await getJson(`${core.api}/api/v1/sessions?node_id=edge-fra`);
  expect([sessions.status, sessions.body.sessions.map((s: { session: string }) => s.session)]).toEqual([200, ["abc123"]]);
  expect((await getJson(`${core.api}/api/v1/events?node_id=${BIG_ID}`)).body.events.length).toBe(1);

  const unknown = await getJson(`${core.api}/api/v1/events?node_id=nowhere`);
  expect([unknown.status, unknown.body.error.message]).toEqual([400, 'query parameter node_id: no node is named "nowhere"']);
  const shared = await getJson(`${core.api}/api/v1/sessions?node_id=twin`);
  expect([shared.status, shared.body.error.message]).toEqual([400, 'query parameter node_id: 2 nodes are named "twin" (ids 42, 43); give the node id']);
  void [a, b, c];
}, 30_000);
