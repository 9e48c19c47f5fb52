import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { BUN, freePort, getJson, ROOT, tempDir } from "../helpers";
import { FAST, FIXTURE_CATALOGUE, potOrder } from "./node-helpers";

/** Core as its own process, so that it can be killed for real; resolves once it listens. */
async function spawnCore(db: string, ports: { node: number; event: number }) {
  const args = ["core", "--db", db, "--node-port", String(ports.node), "--event-port", String(ports.event), "--api-port", "0", "--ws-port", "0", "--log-level", "info", "--log-events", "false"];
  const proc = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), ...args], { stdout: "pipe", stderr: "inherit" });
  const started = Promise.withResolvers<string>();
  // Keep reading to the end: a Core whose stdout is not read dies of EPIPE on its next log line.
  void (async () => {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of proc.stdout) {
      if (!text.includes("core started")) text += decoder.decode(chunk);
      const line = text.split("\n").find((l) => l.includes('"core started"'));
      if (line) started.resolve(`http://127.0.0.1:${JSON.parse(line).ports.api}`);
    }
    started.reject(new Error(`Core did not start: ${text}`));
  })();
  return { proc, api: await started.promise };
}

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
