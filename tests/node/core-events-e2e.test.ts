import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { freePort, getJson, tempDir } from "../helpers";
import { FAST, FIXTURE_CATALOGUE, potOrder, spawnCore } from "./node-helpers";

function countEvents(db: string): { n: number; distinct_seq: number } {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite
      .query("SELECT count(*) AS n, count(DISTINCT json_extract(e.data, '$.seq')) AS distinct_seq FROM events e JOIN event_sources s ON s.id = e.source_id WHERE s.pot_id = 'emitter'")
      .get() as { n: number; distinct_seq: number };
  } finally {
    sqlite.close();
  }
}

describe("events through the real Core", () => {
  test("Core is killed while a honeypot emits 10,000 events; after Core restarts SQLite holds exactly 10,000", async () => {
    using dir = tempDir();
    const db = join(dir.path, "core.db");
    const ports = { node: freePort(), event: freePort() };
    let core = await spawnCore(db, ports);
    const node = await startNode({ core: `127.0.0.1:${ports.node}`, events: `127.0.0.1:${ports.event}`, data: join(dir.path, "node"), relay_port: 0, catalogue: FIXTURE_CATALOGUE, forward_window: 1000, ...FAST }, silentLogger());
    try {
      await node.registered();
      const port = freePort();
      const install = { InstallPot: { pot_id: "emitter", honeypot_type: "testpot", config: { listen_port: String(port) }, auto_start: true } };
      const sent = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(install) });
      expect(sent.status).toBe(202);
      await node.supervisor.reached("emitter", "Running");

      const emitted = potOrder(port, "emit 10000");
      await node.forwarder.acknowledged(1);
      core.proc.kill("SIGKILL");
      await core.proc.exited;
      expect(await emitted).toEqual({ emitted: 10000 });
      const before = countEvents(db);
      expect(before.n).toBeLessThan(10000);

      core = await spawnCore(db, ports);
      await node.forwarder.drained();
      core.proc.kill("SIGTERM");
      await core.proc.exited;
      expect({ before: before.n > 0, after: countEvents(db) }).toEqual({ before: true, after: { n: 10000, distinct_seq: 10000 } });
    } finally {
      await node.stop();
      core.proc.kill("SIGKILL");
    }
  });
});
