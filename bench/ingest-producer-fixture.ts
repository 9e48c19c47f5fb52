/**
 * The ingest bench's producer, its own process: generates the events first (not timed), then
 * sends them over `connections` TCP connections as fast as the server takes them, honouring
 * partial writes and `drain`. With `acks`, each connection opens with EventStreamHello and
 * the producer measures send-to-commit latency from Core's EventAck lines.
 *
 * Shape `potlog-control` plays Go nodes on the control channel instead: connection c is node
 * NODE_ID - c, registers (NodeRegistration, waits for RegistrationAck), then sends its events
 * as PotLog messages. That channel has no acks, so with `markerPort` (Core's event socket) the
 * end is found this way: each connection registers again and waits for the ack (Core has read
 * everything before it), then one event goes to the event socket with acks on; its EventAck
 * means every event before it is committed (batches commit in order).
 *
 * argv[2]: JSON {port, events, connections, seed, baseMs, acks, shape, markerPort?}. Prints
 * one JSON line: {start, end, sent, p50, p99} (times from Date.now(), latencies in ms; end is
 * the last ack; no latencies on the control channel).
 */
import { NODE_ID, eventLinesOf, type Shape } from "./ingest-events";

const args = JSON.parse(process.argv[2]!) as { port: number; events: number; connections: number; seed: number; baseMs: number; acks: boolean; shape: Shape; markerPort?: number };
const control = args.shape === "potlog-control";
const nodeOf = (c: number) => (BigInt(NODE_ID) - BigInt(c)).toString();
const registration = (c: number) => `{"version":2,"message":{"NodeRegistration":{"node_id":${nodeOf(c)},"node_name":"go-node-${c}","address":"127.0.0.1","port":0,"node_type":"Full"}}}\n`;
// On the control channel the producer does not ask for acks: there are none.
const acks = args.acks && !control;
const CHUNK = 256 * 1024;

interface Stream {
  buf: Buffer;
  /** Byte offset just past each line. */
  ends: Uint32Array;
  sentAt: Float64Array;
  off: number;
  sentLines: number;
  acked: number;
  finished: boolean;
}

// Generate everything before the clock starts.
const make = eventLinesOf(args.shape, args.seed, args.baseMs);
const streams: Stream[] = [];
const per = Math.ceil(args.events / args.connections);
for (let c = 0, i = 0; c < args.connections; c++) {
  const n = Math.min(per, args.events - i);
  const parts: Buffer[] = [];
  const ends = new Uint32Array(n);
  let size = 0;
  if (acks) {
    const hello = Buffer.from(`{"version":2,"message":{"EventStreamHello":{"node_id":18446744073709551557,"acks":true}}}\n`);
    parts.push(hello);
    size += hello.length;
  }
  for (let k = 0; k < n; k += 4096) {
    let text = "";
    const m = Math.min(4096, n - k);
    for (let j = 0; j < m; j++) text += make(i + k + j, control ? nodeOf(c) : NODE_ID) + "\n";
    const b = Buffer.from(text);
    let at = 0;
    for (let j = 0; j < m; j++) {
      at = b.indexOf(10, at) + 1;
      ends[k + j] = size + at;
    }
    parts.push(b);
    size += b.length;
  }
  i += n;
  streams.push({ buf: Buffer.concat(parts), ends, sentAt: new Float64Array(n), off: 0, sentLines: 0, acked: 0, finished: false });
}

const latencies = new Float32Array(args.events);
let nLat = 0;
let acksLeft = acks ? args.connections : 0;
let writesLeft = args.connections;
let end = 0;
const done = Promise.withResolvers<void>();

function pump(s: Stream, sock: { write(b: Uint8Array): number; end(): void }) {
  while (s.off < s.buf.length) {
    const chunk = s.buf.subarray(s.off, Math.min(s.off + CHUNK, s.buf.length));
    const n = sock.write(chunk);
    if (n > 0) {
      s.off += n;
      const now = performance.now();
      while (s.sentLines < s.ends.length && s.ends[s.sentLines]! <= s.off) s.sentAt[s.sentLines++] = now;
    }
    if (n < chunk.length) return; // the rest goes on drain
  }
  if (!s.finished) {
    s.finished = true;
    if (--writesLeft === 0 && !acks) {
      if (control && args.markerPort) void commitMarker();
      else {
        end = Date.now();
        done.resolve();
      }
    }
    if (!acks && !control) sock.end();
  }
}

/** Writes a short message whole, waiting out a full socket buffer. */
async function writeAll(sock: { write(b: string): number }, text: string) {
  for (let n = sock.write(text); n < text.length; n += sock.write(text.slice(n))) await Bun.sleep(1);
}

/** Control channel: each node registers again (all it sent is read), then one acked event on the event socket. */
const socks: { write(b: string): number; end(): void }[] = [];
const registered: (() => void)[] = [];
async function commitMarker() {
  await Promise.all(
    socks.map((sock, c) => {
      const acked = new Promise<void>((resolve) => (registered[c] = resolve));
      void writeAll(sock, registration(c));
      return acked;
    }),
  );
  const acked = Promise.withResolvers<void>();
  const marker = await Bun.connect({
    hostname: "127.0.0.1",
    port: args.markerPort!,
    socket: { data: (_s, chunk) => void (chunk.toString().includes('"seq":1') && acked.resolve()) },
  });
  await writeAll(marker, `{"version":2,"message":{"EventStreamHello":{"node_id":${NODE_ID},"acks":true}}}\n${make(0)}\n`);
  await acked.promise;
  end = Date.now();
  for (const sock of socks) sock.end();
  marker.end();
  done.resolve();
}

const start = Date.now();
await Promise.all(
  streams.map(async (s, c) => {
    let text = "";
    const registeredOnce = Promise.withResolvers<void>();
    registered[c] = registeredOnce.resolve;
    const sock = await Bun.connect({
      hostname: "127.0.0.1",
      port: args.port,
      socket: {
        drain: (sk) => pump(s, sk),
        data: (_sk, chunk) => {
          text += chunk.toString();
          let nl: number;
          while ((nl = text.indexOf("\n")) >= 0) {
            const line = text.slice(0, nl);
            text = text.slice(nl + 1);
            if (line.includes("RegistrationAck")) registered[c]?.();
            const m = /"seq":(\d+)/.exec(line);
            if (!m) continue;
            const seq = Number(m[1]);
            const now = performance.now();
            for (; s.acked < seq && s.acked < s.sentAt.length; s.acked++) latencies[nLat++] = now - s.sentAt[s.acked]!;
            if (s.acked === s.ends.length && --acksLeft === 0) {
              end = Date.now();
              done.resolve();
            }
          }
        },
        close: () => {},
      },
    });
    socks[c] = sock;
    if (control) {
      sock.write(registration(c));
      await registeredOnce.promise;
    }
    pump(s, sock);
  }),
);
await done.promise;
const lat = latencies.subarray(0, nLat).sort();
const pct = (p: number) => (nLat ? lat[Math.min(nLat - 1, Math.floor(nLat * p))]! : null);
console.log(JSON.stringify({ start, end, sent: args.events, p50: pct(0.5), p99: pct(0.99) }));
process.exit(0);
