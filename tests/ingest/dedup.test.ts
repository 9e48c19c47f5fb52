import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BIG_ID, LineClient, getJson, registerNode, startTestCore, tempDir, type TestCore } from "../helpers";

const line = (n: number) => JSON.stringify({ eventid: "cowrie.login.failed", pot_id: "ssh-1", src_ip: "203.0.113.9", username: "root", password: `pw-${n}` });

/** Opens a node's event stream at spool position `first` and sends events first+1..last. */
async function sendSpool(core: TestCore, first: number, last: number, nodeId = BIG_ID, spool = "spool-a") {
  const c = await LineClient.connect(core.ports.event);
  c.send("EventStreamHello", { node_id: nodeId, acks: true, spool_id: spool, first_seq: first });
  let text = "";
  for (let n = first + 1; n <= last; n++) text += line(n) + "\n";
  c.sendRaw(text);
  const want = last - first;
  for (;;) if ((await c.nextKind("EventAck")).seq === want) break;
  c.close();
}

async function passwords(core: TestCore): Promise<string[]> {
  const body = (await getJson(`${core.api}/api/v1/events?limit=500&event_type=cowrie.login.failed`)).body;
  return body.events.map((e: any) => e.data.password).sort();
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => `pw-${a + i}`).sort();

describe("a node resending what Core committed but could not acknowledge", () => {
  test("is stored once, across reconnects and Core restarts", async () => {
    using dir = tempDir();
    const db = join(dir.path, "core.db");
    {
      await using core = await startTestCore({ db });
      using node = await registerNode(core);
      await sendSpool(core, 0, 10);
      // The acks for 6..10 were "lost": the node starts again from position 5.
      await sendSpool(core, 5, 15);
      expect(await passwords(core)).toEqual(range(1, 15));
      expect((await getJson(`${core.api}/api/v1/stats`)).body.ingest).toMatchObject({ duplicates: 5 });
      expect(node).toBeDefined();
    }
    await using core = await startTestCore({ db });
    using node = await registerNode(core);
    await sendSpool(core, 0, 16);
    expect(await passwords(core)).toEqual(range(1, 16));
    expect(node).toBeDefined();
  });

  test("only the node itself can name its spool: a stream for an unconnected node is not deduplicated", async () => {
    await using core = await startTestCore();
    await sendSpool(core, 0, 3, 77n);
    await sendSpool(core, 0, 3, 77n);
    expect(await passwords(core)).toEqual(["pw-1", "pw-1", "pw-2", "pw-2", "pw-3", "pw-3"]);
  });
});
