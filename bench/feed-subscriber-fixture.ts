/**
 * Live-feed bench client: opens N WebSocket connections to a URL, counts frames, and samples
 * ingest-to-client latency from the `sent_at` the producer wrote into each event. A line
 * "reset" on stdin starts the count again (after the bench's warm-up) and is answered with a
 * line. Prints one JSON line when told to stop (SIGTERM) or stdin closes.
 */
export {};
const [url, countArg, sampleArg] = process.argv.slice(2);
const count = Number(countArg);
const sampleEvery = Number(sampleArg ?? 20);
let received = 0;
let firstAt = 0;
let lastAt = 0;
let closed = 0;
let open = 0;
let failed = 0;
let latencies: number[] = [];
const now = () => performance.timeOrigin + performance.now();
const SENT_AT = /"sent_at":([\d.]+)/;

for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url!);
  let settled = false;
  const settle = (ok: boolean) => {
    if (settled) return;
    settled = true;
    if (ok) open++;
    else failed++;
    if (open + failed === count) console.log(JSON.stringify({ ready: true, open, failed }));
  };
  ws.onopen = () => settle(true);
  ws.onerror = () => settle(false);
  ws.onmessage = (e) => {
    lastAt = Date.now();
    if (firstAt === 0) firstAt = lastAt;
    if (++received % sampleEvery === 0) {
      const m = SENT_AT.exec(e.data as string);
      if (m) latencies.push(now() - Number(m[1]));
    }
  };
  ws.onclose = () => {
    closed++;
    settle(false);
  };
}

const report = () => {
  console.log(JSON.stringify({ received, closed, firstAt, lastAt, latencies }));
  process.exit(0);
};
process.on("SIGTERM", report);
for await (const line of console) {
  if (line.trim() === "reset") {
    received = firstAt = lastAt = 0;
    latencies = [];
    console.log(JSON.stringify({ reset: true }));
  }
}
report();
