import { expect, test } from "bun:test";
import { EventReader } from "../../src/db/event-reader";
import { openDatabase } from "../../src/db";
import { join } from "node:path";
import { getJson, startTestCore, tempDir } from "../helpers";
import { sendEvents } from "../helpers/outputs";

test("the outputs' reader returns committed events in id order, as REST shows them, sources and types learnt as they appear", async () => {
  using dir = tempDir();
  await using core = await startTestCore({ db: join(dir.path, "core.db") });
  const reader = new EventReader(openDatabase(join(dir.path, "core.db")));
  expect([reader.lastId(), reader.after(0, 10)]).toEqual([0, []]);
  await sendEvents(core, [{ seq: 1 }, { seq: 2, eventid: "cowrie.command.input", node_id: 18446744073709551557n, data: { node_id: 18446744073709551557n } }]);
  await sendEvents(core, [{ seq: 3, pot_id: "web-01", pot_type: "honnypotter", eventid: "honnypotter.login.failed" }]);
  const rest = (await getJson(`${core.api}/api/v1/events`)).body.events.reverse();
  const read = reader.after(0, 10).map((e) => ({ id: e.id, node_id: e.node_id, pot_id: e.pot_id, pot_type: e.pot_type, event_type: e.event_type, timestamp: new Date(e.ts).toISOString(), src_ip: e.src_ip, data: e.data }));
  expect(read).toEqual(rest);
  expect(read.map((e) => e.data.seq)).toEqual([1, 2, 3]);
  expect(reader.after(1, 1).map((e) => e.id)).toEqual([2]);
  expect(reader.lastId()).toBe(3);
});
