import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BIG_ID, LineClient, getJson, registerNode, settled, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { spawnCore } from "../node/node-helpers";

const line = (n: number) => JSON.stringify({ eventid: "cowrie.login.failed", pot_id: "ssh-1", src_ip: "203.0.113.9", username: "root", password: `pw-${n}` });

/** Opens a node's event stream at spool position `first` and sends events first+1..last. */
async function sendSpool(core: { ports: { event: number } }, first: number, last: number, nodeId = BIG_ID, spool = "spool-a") {
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
  await settled(core);
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

/** A HonnyPotter login as its forwarder writes it: the same line for the same attempt, to the second. */
const honnypotterLogin = (unixSeconds: number) =>
  JSON.stringify({ eventid: "honnypotter.login.failed", pot_id: "web-01", pot_type: "honnypotter", timestamp: unixSeconds, src_ip: "203.0.113.7", username: "admin", password: "hunter2", user_agent: "curl/7.88.1", request_uri: "/standalone.php" });

/** Sends `n` copies of one line on a connection of its own, with no hello, as the forwarder does. */
async function sendCopies(port: number, line: string, n: number) {
  const c = await LineClient.connect(port);
  c.sendRaw(`${line}\n`.repeat(n));
  c.close();
  await c.closed;
}

describe("identical lines from senders that never resend", () => {
  test("are as many events as lines: 200 on one connection, 400 from two", async () => {
    await using core = await startTestCore();
    const line = honnypotterLogin(Math.floor(Date.now() / 1000) - 3600);
    await sendCopies(core.ports.event, line, 200);
    await until(async () => (await getJson(`${core.api}/api/v1/stats`)).body.ingest.committed === 200, "200 committed");
    await settled(core);
    expect((await getJson(`${core.api}/api/v1/events?pot_id=web-01&limit=1000`)).body.events.length).toBe(200);
    await sendCopies(core.ports.event, line, 200);
    await until(async () => (await getJson(`${core.api}/api/v1/stats`)).body.ingest.committed === 400, "400 committed");
    await settled(core);
    const stored = (await getJson(`${core.api}/api/v1/events?pot_id=web-01&limit=1000`)).body.events;
    expect({ events: stored.length, times: new Set(stored.map((e: any) => e.timestamp)).size }).toEqual({ events: 400, times: 1 });
    expect((await getJson(`${core.api}/api/v1/stats`)).body.ingest).toMatchObject({ duplicates: 0 });
  });
});

describe("a node's spool replayed after Core was killed", () => {
  test("is stored once, and the replayed events are counted as duplicates", async () => {
    using dir = tempDir();
    const db = join(dir.path, "core.db");
    const first = await spawnCore(db);
    try {
      const node = await registerNode(first);
      await sendSpool(first, 0, 10);
      node.close();
    } finally {
      first.proc.kill("SIGKILL");
      await first.proc.exited;
    }
    await using core = await startTestCore({ db });
    using node = await registerNode(core);
    // The acks for 6..10 never reached the node: it sends them again after the kill.
    await sendSpool(core, 5, 15);
    expect(await passwords(core)).toEqual(range(1, 15));
    expect((await getJson(`${core.api}/api/v1/stats`)).body.ingest).toMatchObject({ committed: 5, duplicates: 5 });
    expect(node).toBeDefined();
  });
});
