/**
 * The cluster bench's paced producer, its own process: sends realistic flat events
 * (bench/ingest-events.ts) at a steady `rate` per second for `seconds` over one connection with
 * acks (EventStreamHello acks:true), where the full-speed producer (ingest-producer-fixture.ts)
 * sends as fast as it can. With `sentAt`, each event carries its send time (ms since the epoch,
 * fractional) as `sent_at` in its data, for feed latency measured by the subscribers
 * (feed-subscriber-fixture.ts).
 *
 * argv[2]: JSON {port, rate, seconds, seed, baseMs, sentAt}. Prints one JSON line when every
 * event is acknowledged: {sent, start, sendEnd, end} (Date.now() times; sendEnd is when the
 * last event was written, end the last EventAck).
 */
import { NODE_ID, eventLines } from "./ingest-events";

const args = JSON.parse(process.argv[2]!) as { port: number; rate: number; seconds: number; seed: number; baseMs: number; sentAt: boolean };
const total = Math.round(args.rate * args.seconds);
const make = eventLines(args.seed, args.baseMs);
const now = () => performance.timeOrigin + performance.now();
// A few events ahead, generated before the clock starts, when there is no send time to stamp.
const lines: string[] = [];
if (!args.sentAt) for (let i = 0; i < total; i++) lines.push(make(i));
const line = (i: number) => (args.sentAt ? `{"sent_at":${now().toFixed(3)},${make(i).slice(1)}` : lines[i]!);

let acked = 0;
let text = "";
let pending: Buffer = Buffer.alloc(0);
const done = Promise.withResolvers<void>();
let end = 0;

const flush = (s: { write(b: Uint8Array): number }) => {
  while (pending.length > 0) {
    const k = s.write(pending);
    if (k <= 0) return;
    pending = pending.subarray(k);
  }
};

const sock = await Bun.connect({
  hostname: "127.0.0.1",
  port: args.port,
  socket: {
    drain: (s) => flush(s),
    data: (_s, chunk) => {
      text += chunk.toString();
      let nl: number;
      while ((nl = text.indexOf("\n")) >= 0) {
        const l = text.slice(0, nl);
        text = text.slice(nl + 1);
        const m = /"seq":(\d+)/.exec(l);
        if (m) acked = Math.max(acked, Number(m[1]));
      }
      if (acked >= total && !end) {
        end = Date.now();
        done.resolve();
      }
    },
    close: () => done.reject(new Error(`connection closed after ${acked} of ${total} acknowledgements`)),
  },
});
pending = Buffer.from(`{"version":2,"message":{"EventStreamHello":{"node_id":${NODE_ID},"acks":true}}}\n`);
flush(sock);

// Every 5 ms: whatever the clock says is due. A producer that cannot keep up (the socket full)
// queues the rest, so the offered rate stays the asked one as long as Core reads.
const start = Date.now();
const t0 = performance.now();
let sent = 0;
while (sent < total) {
  const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * args.rate));
  if (due > sent) {
    let out = "";
    for (; sent < due; sent++) out += `${line(sent)}\n`;
    pending = pending.length ? Buffer.concat([pending, Buffer.from(out)]) : Buffer.from(out);
    flush(sock);
  }
  await Bun.sleep(5);
}
while (pending.length > 0) await Bun.sleep(5);
const sendEnd = Date.now();
await done.promise;
sock.end();
console.log(JSON.stringify({ sent: total, start, sendEnd, end }));
process.exit(0);
