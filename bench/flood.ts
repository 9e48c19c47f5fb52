/**
 * Core's memory under a flood on the control channel: BENCH_FLOOD_CONNECTIONS nodes (8) register
 * on 9001 and send PotLogs whose `input` is BENCH_FLOOD_PAD bytes (comma list, "4096,16384"),
 * BENCH_FLOOD_BYTES of inputs per node (80,000,000: 20,000 events of 4 KiB), as fast as the
 * socket takes them. Core is started twice per size: with bin/honeybee's environment for Bun (LAUNCHER_ENV)
 * and bare, as `bun src/main.ts core` runs in an environment without it. Reports Core's peak
 * RSS (VmHWM, and VmRSS sampled every 50 ms) and the rate; a run ends when Core has committed
 * every event. Goal: under 512 MB however Core is started (docs/benchmarks.md, "Memory under
 * floods on the control channel").
 *
 *   bun run bench flood
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUN, LAUNCHER_ENV, ROOT, benchDir, table } from "./lib";

const PADS = (process.env.BENCH_FLOOD_PAD ?? "4096,16384").split(",").map(Number);
const CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 8);
const BYTES = Number(process.env.BENCH_FLOOD_BYTES ?? 80_000_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));
const NODE = 18446744073709551000n;

function statusMb(pid: number, key: string): number {
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
}

async function startCore(bare: boolean) {
  const dir = benchDir();
  const logPath = join(dir, "core.log");
  const env: Record<string, string | undefined> = { ...process.env, HONEYBEE_API_RATE_PER_MINUTE: "0" };
  if (bare) {
    delete env.MIMALLOC_PURGE_DELAY;
    delete env.BUN_JSC_forceRAMSize;
  } else Object.assign(env, LAUNCHER_ENV);
  const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", join(dir, "core.db"), "--log-level", "info", "--log-events", "false"], { stdout: Bun.file(logPath), stderr: "inherit", env });
  for (;;) {
    await Bun.sleep(50);
    const started = readFileSync(logPath, "utf8").split("\n").find((l) => l.includes('"core started"'));
    if (started) return { proc, dir, ports: JSON.parse(started).ports as { node: number; api: number } };
    if (proc.exitCode !== null) throw new Error(`core exited: ${readFileSync(logPath, "utf8")}`);
  }
}

/** One node: registers, sends `events` PotLogs, registers again and waits for the ack (Core read them all). */
async function flood(port: number, c: number, pad: string, events: number): Promise<void> {
  const id = NODE - BigInt(c);
  const registration = Buffer.from(`{"version":2,"message":{"NodeRegistration":{"node_id":${id},"node_name":"flood-${c}","address":"127.0.0.1","port":0,"node_type":"Full"}}}\n`);
  const block = Buffer.from(
    Array.from({ length: 1000 }, (_, i) => `{"version":2,"message":{"PotLog":{"node_id":${id},"pot_id":"flood-${c}","pot_type":"cowrie","log_type":"cowrie.command.input","data":{"src_ip":"10.9.${c}.${i % 250}","session":"s${c}-${i % 97}","input":"${pad}"},"timestamp":"${new Date(Date.now() - 60_000).toISOString()}"}}}\n`).join(""),
  );
  let acks = 0;
  let waiter: (() => void) | null = null;
  let drained: (() => void) | null = null;
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, chunk) {
        acks += chunk.toString().split("RegistrationAck").length - 1;
        waiter?.();
      },
      drain() {
        drained?.();
      },
    },
  });
  const write = async (b: Buffer) => {
    for (let off = 0; off < b.length; ) {
      off += Math.max(socket.write(b.subarray(off)), 0);
      if (off < b.length) await new Promise<void>((r) => (drained = r));
    }
  };
  const registered = async (n: number) => {
    while (acks < n) await new Promise<void>((r) => (waiter = r));
  };
  await write(registration);
  await registered(1);
  for (let k = 0; k < events; k += 1000) await write(block);
  await write(registration);
  await registered(2);
  socket.end();
}

async function run(bare: boolean, padBytes: number) {
  const events = Math.ceil(BYTES / padBytes / 1000) * 1000;
  const { proc, dir, ports } = await startCore(bare);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, statusMb(proc.pid, "VmRSS"))), 50);
  try {
    const start = performance.now();
    const pad = "x".repeat(padBytes);
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, c) => flood(ports.node, c, pad, events)));
    const total = CONNECTIONS * events;
    for (;;) {
      const stats = (await (await fetch(`http://127.0.0.1:${ports.api}/api/v1/stats?window=1h&top=1`)).json()) as { ingest: { committed: number } };
      if (stats.ingest.committed >= total) break;
      await Bun.sleep(100);
    }
    const seconds = (performance.now() - start) / 1000;
    return { peak: Math.round(Math.max(peak, statusMb(proc.pid, "VmHWM"))), rate: Math.round(total / seconds), total };
  } finally {
    clearInterval(sampler);
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchFlood(): Promise<string> {
  const rows: (string | number)[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const pad of PADS) {
      for (const bare of [false, true]) {
        const r = await run(bare, pad);
        rows.push([bare ? "bun src/main.ts core, bare environment" : "with bin/honeybee's environment", pad, CONNECTIONS, r.total.toLocaleString("en-US"), r.rate.toLocaleString("en-US"), r.peak]);
      }
    }
  }
  return table(["Core started", "input bytes", "nodes", "events", "events/s", "peak RSS MB"], rows);
}

if (import.meta.main) console.log(await benchFlood());
