import { expect, test } from "bun:test";
import { stringify } from "../../src/protocol/json";
import { EventStreamClient, getJson, settled, startTestCore } from "../helpers";
import { goPotLog } from "../helpers/go-node";

test("stats list the most typed commands of the window, from flat lines and Go-node PotLogs alike", async () => {
  await using core = await startTestCore();
  const now = new Date().toISOString();
  const input = (cmd: string) => ({ eventid: "cowrie.command.input", input: cmd, session: "s1", src_ip: "203.0.113.9", timestamp: now });
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send([
    JSON.stringify(input("uname -a")),
    JSON.stringify(input("uname -a")),
    JSON.stringify(input("cat /proc/cpuinfo")),
    stringify({ version: 2, message: { PotLog: goPotLog(input("uname -a"), { node_id: 7n, pot_id: "ssh-01", pot_type: "cowrie" }) } }),
    // An old command, outside the window, does not count.
    JSON.stringify({ ...input("old"), timestamp: "2020-01-01T00:00:00Z" }),
  ]);
  await c.ack(5);
  await settled(core);
  const s = await getJson(`${core.api}/api/v1/stats?window=24h`);
  expect(s.body.top.commands).toEqual([
    { value: "uname -a", count: 3 },
    { value: "cat /proc/cpuinfo", count: 1 },
  ]);
});
