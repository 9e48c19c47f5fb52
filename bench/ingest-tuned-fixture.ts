/**
 * Baseline (b+), the tuned simple design, in its own process: Core's thread layout and
 * tuning without Core's extra work. The receiving thread splits lines and JSON.parses them
 * (bench/ingest-naive.ts), batches rows like Core's pipeline (src/core/ingest/pipeline.ts:
 * sealed at 16,384 events, 5 ms after the first, or as soon as the writer has room; at most
 * two batches at the writer; reading paused at 65,536 pending events until half are written),
 * and hands them to a writer thread (bench/ingest-tuned-writer.ts: Core's pragmas and 16 KiB
 * pages, 32 rows per INSERT); the WAL is checkpointed in a thread of its own by Core's own
 * checkpointer (src/db/checkpointer.ts). No dictionaries, segment summaries, counters,
 * acknowledgements, live feed or log.
 *
 * argv: expected events, db path. Prints {"port", "cpu"} when listening and
 * {"done": Date.now(), "cpu"} once every expected event is committed (cpu: the process's CPU
 * time so far, µs, all threads). The expected events may be a comma list of running totals
 * (a warm-up, then the measured run): a done line for each.
 */
import type { Socket } from "bun";
import { LineSplitter } from "../src/protocol/framing";
import { doneLines, naiveLine, processCpu, registrationAck, type NaiveRow } from "./ingest-naive";
import type { TunedBatch } from "./ingest-tuned-writer";

const [expectedArg, dbPath] = process.argv.slice(2);
// Not exiting after the last: the bench reads this process's peak memory before it ends it.
const reached = doneLines(expectedArg!);
const BATCH_SIZE = 16_384;
const BATCH_DELAY_MS = 5;
const MAX_IN_FLIGHT = 2;
const MAX_PENDING = 65_536;

const writer = new Worker(new URL("./ingest-tuned-writer.ts", import.meta.url).href);
const checkpointer = new Worker(new URL("../src/db/checkpointer.ts", import.meta.url).href);
let checkpointing = false;
let checkpointAgain = false;
checkpointer.onmessage = () => {
  checkpointing = false;
  if (checkpointAgain) poke();
};
const poke = () => {
  checkpointAgain = checkpointing;
  if (checkpointing) return;
  checkpointing = true;
  checkpointer.postMessage({ op: "checkpoint" });
};

class Building {
  n = 0;
  ts = new Float64Array(BATCH_SIZE);
  cols: string[][] = [[], [], [], [], [], []];
  add(r: NaiveRow) {
    this.ts[this.n++] = r[0];
    for (let c = 0; c < 6; c++) this.cols[c]!.push((r[c + 1] as string | null) ?? "");
  }
  wire(): TunedBatch {
    const [nodeIds, potIds, potTypes, types, ips, data] = this.cols.map((c) => c.join("\n")) as [string, string, string, string, string, string];
    return { n: this.n, ts: this.n === BATCH_SIZE ? this.ts : this.ts.slice(0, this.n), nodeIds, potIds, potTypes, types, ips, data };
  }
}

let current: Building | null = null;
const sealed: TunedBatch[] = [];
let inFlight = 0;
let pending = 0;
let committed = 0;
let timer: ReturnType<typeof setTimeout> | null = null;
let paused = false;
const sockets = new Set<Socket<{ splitter: LineSplitter }>>();

function seal() {
  if (timer) clearTimeout(timer);
  timer = null;
  if (!current || current.n === 0) return;
  sealed.push(current.wire());
  current = null;
  pump();
}

function pump() {
  while (inFlight < MAX_IN_FLIGHT && sealed.length) {
    const b = sealed.shift()!;
    inFlight++;
    writer.postMessage({ op: "write", batch: b }, [b.ts.buffer as ArrayBuffer]);
  }
}

writer.onmessage = (e: MessageEvent<{ n: number }>) => {
  const { n } = e.data;
  if (n === 0) return; // opened
  inFlight--;
  committed += n;
  pending -= n;
  poke();
  reached(committed);
  if (paused && pending <= MAX_PENDING / 2) {
    paused = false;
    resumedAt = Date.now();
    bytesAtResume = bytesIn;
    for (const s of sockets) s.resume();
  }
  if (sealed.length === 0 && current && inFlight < MAX_IN_FLIGHT) seal();
  pump();
};
writer.postMessage({ op: "open", path: dbPath });
checkpointer.postMessage({ op: "open", path: dbPath });
checkpointing = true;

function onRow(r: NaiveRow) {
  current ??= new Building();
  current.add(r);
  pending++;
  if (pending >= MAX_PENDING && !paused) {
    paused = true;
    for (const s of sockets) s.pause();
  }
  if (current.n >= BATCH_SIZE) seal();
  else timer ??= setTimeout(seal, BATCH_DELAY_MS);
}

/**
 * Runs of this fixture have hung, rarely (three in the runs of 2026-11-27, with and without
 * the allocator setting; the first looked at: every process idle, the producer waiting for a
 * socket to drain), and the bench's timeout only says that it did.
 * When nothing has been committed for STALL_MS while events wait or reading is paused, this
 * says on stderr where the fixture stands, so the next hang tells which side stopped.
 */
const STALL_MS = 30_000;
let bytesIn = 0;
let resumedAt = 0;
let bytesAtResume = 0;
let lastCommitted = -1;
let stalledSince = Date.now();
let reported = 0;
setInterval(() => {
  const now = Date.now();
  if (committed !== lastCommitted || (pending === 0 && !paused)) {
    lastCommitted = committed;
    stalledSince = now;
    return;
  }
  if (now - stalledSince < STALL_MS || now - reported < STALL_MS) return;
  reported = now;
  const state = { committed, pending, inFlight, sealed: sealed.length, building: current?.n ?? 0, timer: timer !== null, paused, sockets: sockets.size, bytesIn, bytesSinceResume: resumedAt ? bytesIn - bytesAtResume : null, msSinceResume: resumedAt ? now - resumedAt : null };
  console.error(`ingest-tuned-fixture: nothing committed for ${Math.round((now - stalledSince) / 1000)} s: ${JSON.stringify(state)}`);
}, 1000).unref();
writer.addEventListener("error", (e) => console.error(`ingest-tuned-fixture: the writer thread failed: ${(e as ErrorEvent).message}`));
writer.addEventListener("close", () => console.error("ingest-tuned-fixture: the writer thread exited"));

const server = Bun.listen<{ splitter: LineSplitter }>({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open(s) {
      s.data = { splitter: new LineSplitter() };
      sockets.add(s);
      if (paused) s.pause();
    },
    close(s) {
      sockets.delete(s);
    },
    data(s, chunk) {
      bytesIn += chunk.length;
      s.data.splitter.push(chunk, {
        line: (text) => {
          const l = naiveLine(text);
          if (l.kind === "event") onRow(l.row);
          else if (l.kind === "registration") s.write(registrationAck(l.nodeId));
        },
        oversized: () => {},
      });
    },
  },
});
console.log(JSON.stringify({ port: server.port, cpu: processCpu() }));
