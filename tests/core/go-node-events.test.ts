/**
 * The upstream Go node sends every honeypot event as a PotLog (log_type = the event id, data =
 * its fields as strings) and its PotEvent has no pot_type. Its events must file, count, stream
 * and show like the same Cowrie line sent flat.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseWithIds, stringify } from "../../src/protocol/json";
import { BIG_ID, EventStreamClient, getJson, registerNode, startTestCore, tempDir, WsClient } from "../helpers";
import { onPostgres } from "../helpers/postgres";
import { goData, goPotEvent, goPotLog } from "../helpers/go-node";

const SAMPLE = join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl");
/** A line of the real sample, its time moved to now (to the microsecond, as Cowrie writes it) so that the stats' window holds it. */
const sampleLine = (eventid: string, now: string) =>
  readFileSync(SAMPLE, "utf8")
    .split("\n")
    .find((l) => l.includes(`"eventid": "${eventid}"`))!
    .replace(/"timestamp": "[^"]+"/, `"timestamp": "${now.replace("Z", "123Z")}"`);
const POT = { node_id: BIG_ID, pot_id: "cowrie-lab", pot_type: "cowrie" };

async function goNodeCore(dir: string) {
  const core = await startTestCore(onPostgres() ? {} : { db: join(dir, "core.db") });
  const feed = await WsClient.connect(`${core.ws}/?kinds=PotEvent,PotStatusUpdate`);
  const node = await registerNode(core, BIG_ID, "go-node");
  node.send("PotStatusUpdate", { ...POT, status: "Running" });
  await feed.nextKind("PotStatusUpdate");
  return {
    core,
    feed,
    node,
    async [Symbol.asyncDispose]() {
      feed.close();
      node.close();
      await core.stop();
    },
  };
}

const withoutIds = ({ id, node_id, ...rest }: Record<string, any>) => rest;

describe("a Go node's events", () => {
  test("a Cowrie event sent flat and as the Go node's PotLog (on 9001 and on 9100): equal rows, stats and live-feed messages", async () => {
    using dir = tempDir();
    await using t = await goNodeCore(dir.path);
    const { core, feed, node } = t;
    const now = new Date().toISOString();
    const text = sampleLine("cowrie.login.failed", now);
    const line = parseWithIds(text) as Record<string, unknown>;

    // Flat, as Cowrie's output plugin sends it.
    using cowrie = await EventStreamClient.connect(core.ports.event);
    cowrie.send(text);
    const fromFlat = await feed.nextKind("PotEvent");
    const statsOfOne = (await getJson(`${core.api}/api/v1/stats`)).body.top;

    // The Go node's PotLog on its control connection, then on the event socket.
    node.send("PotLog", goPotLog(line, POT));
    const fromControl = await feed.nextKind("PotEvent");
    using stream = await EventStreamClient.connect(core.ports.event, { node_id: BIG_ID, acks: true });
    stream.send(stringify({ version: 2, message: { PotLog: goPotLog(line, POT) } }));
    const fromStream = await feed.nextKind("PotEvent");

    // The Go node carries every field as a string: that, and the ids, are the only differences.
    const expected = { ...withoutIds(fromFlat), data: goData(fromFlat.data) };
    expect(fromFlat).toMatchObject({ event_type: "cowrie.login.failed", pot_id: "cowrie-lab", pot_type: "cowrie", src_ip: "127.0.0.1", timestamp: now });
    expect([withoutIds(fromControl), withoutIds(fromStream)]).toEqual([expected, expected]);
    expect([fromControl.node_id, fromStream.node_id]).toEqual([BIG_ID, BIG_ID]);

    const rows = (await getJson(`${core.api}/api/v1/events?event_type=cowrie.login.failed&pot_type=cowrie&src_ip=127.0.0.1`)).body.events.reverse();
    expect(rows.map((r: any) => r.id)).toEqual([fromFlat.id, fromControl.id, fromStream.id]);
    expect(rows).toEqual([fromFlat, fromControl, fromStream]);
    expect(rows[1].data.src_ip).toBeUndefined();

    const times3 = (list: { value: string; count: number }[]) => list.map((e) => ({ ...e, count: e.count * 3 }));
    const stats = (await getJson(`${core.api}/api/v1/stats`)).body;
    expect(statsOfOne.usernames).toEqual([{ value: "admin", count: 1 }]);
    expect(stats.top).toEqual({ src_ips: times3(statsOfOne.src_ips), usernames: times3(statsOfOne.usernames), passwords: times3(statsOfOne.passwords), event_types: times3(statsOfOne.event_types), countries: times3(statsOfOne.countries), asns: times3(statsOfOne.asns), commands: times3(statsOfOne.commands), hassh: times3(statsOfOne.hassh), credentials: times3(statsOfOne.credentials) });
  });

  test("a PotEvent without pot_type takes the pot's kind from the registry: ?pot_type=cowrie finds it", async () => {
    using dir = tempDir();
    await using t = await goNodeCore(dir.path);
    const { core, feed, node } = t;
    const line = parseWithIds(sampleLine("cowrie.login.failed", new Date().toISOString())) as Record<string, unknown>;
    node.send("PotEvent", goPotEvent(line, POT));
    const event = await feed.nextKind("PotEvent");
    expect(event).toMatchObject({ node_id: BIG_ID, pot_id: "cowrie-lab", pot_type: "cowrie", event_type: "cowrie.login.failed" });
    const found = (await getJson(`${core.api}/api/v1/events?pot_type=cowrie`)).body.events;
    expect(found).toEqual([event]);
  });
});
