/**
 * `bun run bench cluster` end to end with small sizes, on the machine's PostgreSQL and NATS:
 * every configuration stores exactly its events (the bench throws on more or fewer rows), the
 * overload run drains, every subscriber gets every feed frame, and nothing of the run is left
 * on NATS afterwards.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { join } from "node:path";
import { NATS_URL } from "../cluster/helpers";
import { BUN, ROOT } from "../helpers";

async function streamNames(): Promise<string[]> {
  const nc = await connect({ servers: NATS_URL });
  try {
    const names: string[] = [];
    for await (const s of (await jetstreamManager(nc)).streams.list()) names.push(s.config.name);
    return names;
  } finally {
    await nc.close();
  }
}

describe("bun run bench cluster", () => {
  test("prints every configuration, the overload's drain and the feed, all events delivered", async () => {
    const env = { BENCH_CLUSTER_EVENTS: "3000", BENCH_CLUSTER_NAIVE: "100", BENCH_CLUSTER_OVERLOAD_S: "1", BENCH_CLUSTER_FEED_RATE: "200", BENCH_CLUSTER_FEED_S: "1", BENCH_CLUSTER_SUBSCRIBERS: "4" };
    const proc = Bun.spawn([BUN, join(ROOT, "bench/run.ts"), "cluster"], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect({ code: await proc.exited, err: err.includes("error") ? err : "" }).toEqual({ code: 0, err: "" });
    const rows = out.split("\n").filter((l) => l.startsWith("| "));
    const cells = (name: string) => rows.map((r) => r.split("|").map((c) => c.trim())).find((c) => c[1]!.startsWith(name));
    for (const name of ["naive", "1 ingest + 1 writer", "2 ingest + 1 writer", "1 ingest + 2 writers", "2 ingest + 2 writers"]) {
      const c = cells(name);
      expect(c).toBeDefined();
      // Committed events/s: a positive number.
      expect(Number(c![4]!.replaceAll(",", ""))).toBeGreaterThan(0);
    }
    // The feed: 200 events to each of 4 subscribers.
    expect(out).toMatch(/\|\s*200\s*\|\s*800 \/ 800\s*\|/);
    // Every event on the bus once, from the writers.
    expect(out).toMatch(/\|\s*200\s*\|\s*200 \/ 200\s*\|/);
    // Every deployment's cluster name starts with the bench process's pid (clusterName): none is left on NATS.
    expect((await streamNames()).filter((n) => n.startsWith(`t${proc.pid}x`))).toEqual([]);
  }, 240_000);
});
