/**
 * The growth bench's filler, its own process: streams `count` flat events into Core's event
 * socket (EventStreamHello with acks), generating them as it goes (30M events do not fit in
 * memory at once), and exits once Core has acknowledged the last one. Event i is at
 * `baseMs + i * stepMs`; event 0 comes from `uniqueIp`, an address the generator never uses,
 * so the oldest event is the only one from it.
 *
 * argv[2]: JSON {port, count, baseMs, stepMs, uniqueIp, seed}. Prints {"ms": time taken}.
 */
import { NODE_ID, eventLinesOf } from "./ingest-events";

const args = JSON.parse(process.argv[2]!) as { port: number; count: number; baseMs: number; stepMs: number; uniqueIp: string; seed: number };
const CHUNK_LINES = 8192;
const make = eventLinesOf("flat", args.seed, args.baseMs, args.stepMs);

const acked = Promise.withResolvers<void>();
let drained: (() => void) | null = null;
let text = "";
const t = performance.now();
const sock = await Bun.connect({
  hostname: "127.0.0.1",
  port: args.port,
  socket: {
    drain() {
      const d = drained;
      drained = null;
      d?.();
    },
    data(_s, chunk) {
      text += chunk.toString();
      const nl = text.lastIndexOf("\n");
      if (nl < 0) return;
      const m = /"seq":(\d+)[^\n]*\n?$/.exec(text.slice(0, nl + 1));
      text = text.slice(nl + 1);
      if (m && Number(m[1]) >= args.count) acked.resolve();
    },
    close() {
      acked.reject(new Error("Core closed the event stream"));
    },
  },
});

async function send(buf: Buffer) {
  let off = 0;
  for (;;) {
    off += sock.write(buf.subarray(off));
    if (off >= buf.length) return;
    await new Promise<void>((resolve) => (drained = resolve));
  }
}

await send(Buffer.from(`{"version":2,"message":{"EventStreamHello":{"node_id":${NODE_ID},"acks":true}}}\n`));
for (let i = 0; i < args.count; i += CHUNK_LINES) {
  let chunk = "";
  for (let j = i; j < Math.min(args.count, i + CHUNK_LINES); j++) {
    const line = make(j);
    chunk += (j === 0 ? line.replace(/"src_ip":"[^"]*"/, `"src_ip":"${args.uniqueIp}"`) : line) + "\n";
  }
  await send(Buffer.from(chunk));
}
await acked.promise;
console.log(JSON.stringify({ ms: performance.now() - t }));
sock.end();
process.exit(0);
