/**
 * The ingest bench feeds Core and its baselines every shape through the bench's own producer
 * (bench/ingest-producer-fixture.ts): each shape must carry the same events, Core must commit
 * all of them (on the control channel too, where the run's end is found with a marker
 * event), and the baselines (b) and (b+) must store every one.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { NODE_ID, SHAPES, eventLinesOf, type Shape } from "../../bench/ingest-events";
import { baselineTemplate } from "../../bench/ingest";
import { lineReader } from "../../bench/lib";
import { BUN, ROOT, getJson, startTestCore, tempDir } from "../helpers";

const EVENTS = 60;
const BASE_MS = Date.UTC(2026, 10, 22, 12);

async function produce(port: number, shape: Shape, acks: boolean, markerPort?: number): Promise<void> {
  const args = { port, events: EVENTS, connections: 2, seed: 5, baseMs: BASE_MS, acks, shape, markerPort };
  const proc = Bun.spawn([BUN, join(ROOT, "bench/ingest-producer-fixture.ts"), JSON.stringify(args)], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  expect(JSON.parse(out.trim())).toMatchObject({ sent: EVENTS });
}

/** What every shape must agree on (compared as sorted lists: a session has several events). */
function comparable(e: any) {
  return {
    session: e.data.session,
    pot_id: e.pot_id,
    pot_type: e.pot_type,
    src_ip: e.src_ip,
    // PotLog's event type is its log_type, stored under a prefix or not: the eventid ends it either way.
    type: e.event_type.slice(e.event_type.lastIndexOf("cowrie.")),
    second: Math.floor(Date.parse(e.timestamp) / 1000),
    username: e.data.username,
    password: e.data.password,
    message: e.data.message,
  };
}

describe("the ingest bench's shapes", () => {
  test("Core commits every event of every shape, the same events in each", async () => {
    const stored = new Map<Shape, string[]>();
    for (const shape of SHAPES) {
      await using core = await startTestCore();
      const control = shape === "potlog-control";
      if (control) await produce(core.ports.node, shape, false, core.ports.event);
      else await produce(core.ports.event, shape, true);
      // The control channel's run ends with one marker event on the event socket: the newest.
      const expected = EVENTS + (control ? 1 : 0);
      const stats = await getJson(`${core.api}/api/v1/stats`);
      expect(stats.body.ingest).toMatchObject({ committed: expected, rejected: 0 });
      const page = await getJson(`${core.api}/api/v1/events?limit=${expected}`);
      const events = (page.body.events as any[]).slice(control ? 1 : 0);
      expect(events).toHaveLength(EVENTS);
      // The Go-like nodes are one per connection; every other shape names the bench's node.
      const nodes = control ? [NODE_ID, (BigInt(NODE_ID) - 1n).toString()] : [NODE_ID];
      for (const e of events) expect(nodes).toContain(String(e.node_id));
      stored.set(shape, events.map((e) => JSON.stringify(comparable(e))).sort());
    }
    const flat = stored.get("flat")!;
    expect(flat).toHaveLength(EVENTS);
    expect(new Set(flat.map((e) => JSON.parse(e).session)).size).toBeGreaterThan(1);
    for (const shape of SHAPES) expect(stored.get(shape)).toEqual(flat);
  });

  test("the baselines (b) and (b+) store every event of every shape", async () => {
    using dir = tempDir();
    const make = eventLinesOf("flat", 5, BASE_MS);
    // The producer's two connections take the first and the second half of the events.
    const types = Array.from({ length: EVENTS }, (_, i) => JSON.parse(make(i)).eventid as string).sort();
    for (const shape of SHAPES) {
      for (const [mode, pageSize] of [["sqlite", 4096], ["tuned", 16_384]] as const) {
        const path = join(dir.path, `${mode}-${shape}.db`);
        baselineTemplate(path, pageSize, 0);
        const fixture = mode === "tuned" ? ["bench/ingest-tuned-fixture.ts", String(EVENTS), path] : ["bench/ingest-baseline-fixture.ts", mode, String(EVENTS), path];
        const server = Bun.spawn([BUN, ...fixture.map((a, i) => (i === 0 ? join(ROOT, a) : a))], { stdout: "pipe", stderr: "inherit" });
        try {
          const lines = lineReader(server.stdout);
          const { port } = JSON.parse(await lines.next());
          await produce(port, shape, false);
          expect(JSON.parse(await lines.next())).toHaveProperty("done");
        } finally {
          server.kill();
          await server.exited;
        }
        const db = new Database(path, { readonly: true });
        try {
          const rows = db.query("SELECT event_type, src_ip FROM events ORDER BY event_type").all() as { event_type: string; src_ip: string | null }[];
          expect(rows.map((r) => r.event_type)).toEqual(types);
          expect(rows.filter((r) => r.src_ip === null)).toEqual([]);
          if (mode === "tuned") expect(db.query("PRAGMA page_size").get()).toEqual({ page_size: 16_384 });
        } finally {
          db.close();
        }
      }
    }
  });
});
