/**
 * REST bench: GET /health and the list endpoints (/api/v1/nodes, /api/v1/honeypots with 100
 * nodes x 10 honeypots, /api/v1/events with 1,000 stored events, kept and built), each against a raw Bun.serve
 * returning the same bytes, measured in the same run with load from a separate process (wrk).
 * Each side is its own process, so the CPU it used per request is read from /proc (utime +
 * stime): on a shared machine that is far steadier than requests/s. Rounds alternate Core and
 * the baseline to spread out noise; figures are medians. BENCH_SECONDS, BENCH_ROUNDS size it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "../src/protocol/json";
import { eventLines } from "./ingest-events";
import { BUN, ROOT, benchDir, firstJsonLine, hasWrk, median, spawnCore, table, wrkCpu } from "./lib";

const EVENTS = 1000;

export async function benchRest(seconds = Number(process.env.BENCH_SECONDS ?? 3), rounds = Number(process.env.BENCH_ROUNDS ?? 5)): Promise<string> {
  if (!hasWrk()) return "REST bench skipped: wrk is not installed (apt-get install wrk)";
  // One address makes all the load: lift the per-address request limit for the bench (it
  // spares loopback by default; this keeps the bench honest if that default changes).
  const core = await spawnCore([], { HONEYBEE_API_RATE_PER_MINUTE: "0" });
  const nodes: Awaited<ReturnType<typeof Bun.connect>>[] = [];
  try {
    // 100 nodes, 10 honeypots each, registered over the real control channel.
    for (let n = 0; n < 100; n++) {
      const nodeId = 18446744073709551000n + BigInt(n);
      const acked = Promise.withResolvers<void>();
      const sock = await Bun.connect({ hostname: "127.0.0.1", port: core.ports.node, socket: { data: () => acked.resolve() } });
      const lines = [stringify({ version: 2, message: { NodeRegistration: { node_id: nodeId, node_name: `sensor-${n}`, address: "127.0.0.1", port: 0, node_type: "Full" } } })];
      for (let p = 0; p < 10; p++) {
        lines.push(stringify({ version: 2, message: { PotStatusUpdate: { node_id: nodeId, pot_id: `pot-${p}`, pot_type: p % 2 ? "cowrie" : "honnypotter", status: "Running" } } }));
      }
      sock.write(lines.join("\n") + "\n");
      await acked.promise;
      nodes.push(sock);
    }
    // Events over the event socket, as a node relays them; the list endpoint shows the newest page.
    const base = Date.now() - EVENTS * 1000;
    const line = eventLines(7, base);
    const events = await Bun.connect({ hostname: "127.0.0.1", port: core.ports.event, socket: { data() {} } });
    events.write(Array.from({ length: EVENTS }, (_, i) => line(i)).join("\n") + "\n");
    events.end();
    const api = `http://127.0.0.1:${core.ports.api}`;
    for (;;) {
      const pots = await (await fetch(`${api}/api/v1/honeypots`)).text();
      const stats = (await (await fetch(`${api}/api/v1/stats`)).json()) as { total_events: number };
      if ((pots.match(/pot_id/g) ?? []).length === 1000 && stats.total_events >= EVENTS) break;
      await Bun.sleep(50);
    }
    const rows: (string | number)[][] = [];
    // The events page is kept until the next commit; a page with `since` is built every time
    // (what each poll costs while events arrive).
    const paths = ["/health", "/api/v1/nodes", "/api/v1/honeypots", "/api/v1/events", `/api/v1/events?since=${new Date(base).toISOString()}`];
    for (const path of paths) {
      const bodyFile = join(benchDir(), "body.json");
      const body = new Uint8Array(await (await fetch(api + path)).arrayBuffer());
      writeFileSync(bodyFile, body);
      const raw = Bun.spawn([BUN, join(ROOT, "bench/raw-server-fixture.ts"), bodyFile], { stdout: "pipe" });
      try {
        const rawUrl = `http://127.0.0.1:${(await firstJsonLine(raw)).port}/`;
        const c: { rate: number; cpuUs: number }[] = [];
        const b: { rate: number; cpuUs: number }[] = [];
        for (let r = 0; r < rounds; r++) {
          c.push(await wrkCpu(api + path, core.proc.pid, seconds));
          b.push(await wrkCpu(rawUrl, raw.pid, seconds));
        }
        // Ratios per round (both sides measured back to back), then the median round.
        const rate = median(c.map((x, i) => x.rate / b[i]!.rate));
        const cpu = median(c.map((x, i) => b[i]!.cpuUs / x.cpuUs));
        rows.push([`GET ${path}`, body.length, median(c.map((x) => x.rate)), median(b.map((x) => x.rate)), rate, median(c.map((x) => x.cpuUs)), median(b.map((x) => x.cpuUs)), cpu]);
      } finally {
        raw.kill();
      }
    }
    return (
      table(["operation", "bytes", "core req/s", "raw req/s", "req/s ratio", "core µs CPU/req", "raw µs CPU/req", "CPU ratio (raw/core)"], rows) +
      `\n\nMedians of ${rounds} interleaved rounds of ${seconds} s, 32 connections; ratios are per round, then the median. CPU ratio >= 1 means Core spends no more CPU per request than the raw server.`
    );
  } finally {
    for (const s of nodes) s.end();
    core.proc.kill("SIGTERM");
    await core.proc.exited;
  }
}

if (import.meta.main) console.log(await benchRest());
