/**
 * REST bench: requests/s of GET /api/v1/honeypots (100 nodes x 10 honeypots) and GET /health,
 * each as a ratio to a raw Bun.serve returning the same bytes, measured in the same run with
 * load from a separate process (wrk). Runs alternate A/B to spread out noise.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "../src/protocol/json";
import { BUN, ROOT, benchDir, firstJsonLine, hasWrk, median, spawnCore, table, wrk } from "./lib";

export async function benchRest(seconds = Number(process.env.BENCH_SECONDS ?? 3), rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<string> {
  if (!hasWrk()) return "REST bench skipped: wrk is not installed (apt-get install wrk)";
  // One address makes all the load: lift the per-address request limit for the bench.
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
    const api = `http://127.0.0.1:${core.ports.api}`;
    for (;;) {
      const body = (await (await fetch(`${api}/api/v1/honeypots`)).text());
      if ((body.match(/pot_id/g) ?? []).length === 1000) break;
    }
    const rows: (string | number)[][] = [];
    for (const path of ["/api/v1/honeypots", "/health"]) {
      const bodyFile = join(benchDir(), "body.json");
      const body = new Uint8Array(await (await fetch(api + path)).arrayBuffer());
      writeFileSync(bodyFile, body);
      const raw = Bun.spawn([BUN, join(ROOT, "bench/raw-server-fixture.ts"), bodyFile], { stdout: "pipe" });
      try {
        const rawUrl = `http://127.0.0.1:${(await firstJsonLine(raw)).port}/`;
        const core_: number[] = [];
        const base: number[] = [];
        for (let r = 0; r < rounds; r++) {
          core_.push(await wrk(api + path, seconds));
          base.push(await wrk(rawUrl, seconds));
        }
        const c = median(core_);
        const b = median(base);
        rows.push([`GET ${path}`, body.length, c, b, c / b]);
      } finally {
        raw.kill();
      }
    }
    return table(["operation", "bytes", "core req/s (median)", "raw Bun.serve req/s", "ratio"], rows);
  } finally {
    for (const s of nodes) s.end();
    core.proc.kill("SIGTERM");
    await core.proc.exited;
  }
}

if (import.meta.main) console.log(await benchRest());
