/**
 * Baseline (b+)'s writer thread: its own connection with the pragmas of Core's store
 * (src/db/index.ts, and the writer thread's in src/db/writer-worker.ts), 32 rows per
 * INSERT as Core's writer (src/db/event-writer.ts), one IMMEDIATE transaction per batch. Rows
 * only: no dictionaries, summaries or counters. Replies {n} per committed batch.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

/** A batch as it crosses threads: times in a transferred array, each text column one string joined by "\n". */
export interface TunedBatch {
  n: number;
  ts: Float64Array;
  nodeIds: string;
  potIds: string;
  potTypes: string;
  types: string;
  ips: string;
  data: string;
}

const ROWS_PER_INSERT = 32;
const COLUMNS = 7;
const row = `(${Array(COLUMNS).fill("?").join(",")})`;

let db: Database;
let insertMany: ReturnType<Database["prepare"]>;
let insertOne: ReturnType<Database["prepare"]>;
const values: unknown[] = new Array(ROWS_PER_INSERT * COLUMNS);

function write(b: TunedBatch): void {
  const cols = [b.nodeIds, b.potIds, b.potTypes, b.types, b.ips, b.data].map((s) => s.split("\n"));
  const [nodeIds, potIds, potTypes, types, ips, data] = cols as [string[], string[], string[], string[], string[], string[]];
  const whole = b.n - (b.n % ROWS_PER_INSERT);
  for (let i = 0; i < b.n; i++) {
    const at = i < whole ? (i % ROWS_PER_INSERT) * COLUMNS : 0;
    values[at] = b.ts[i];
    values[at + 1] = nodeIds[i];
    values[at + 2] = potIds[i];
    values[at + 3] = potTypes[i];
    values[at + 4] = types[i];
    values[at + 5] = ips[i] || null;
    values[at + 6] = data[i];
    if (i >= whole) insertOne.run(values.slice(0, COLUMNS) as any);
    else if (at === (ROWS_PER_INSERT - 1) * COLUMNS) insertMany.run(values as any);
  }
}

self.onmessage = (e: MessageEvent<{ op: "open"; path: string } | { op: "write"; batch: TunedBatch }>) => {
  const m = e.data;
  if (m.op === "open") {
    db = new Database(m.path, { strict: true });
    db.exec("PRAGMA page_size = 16384");
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA cache_size = -8192");
    db.exec("PRAGMA temp_store = MEMORY");
    db.exec("PRAGMA wal_autocheckpoint = 0");
    const sql = "INSERT INTO events (ts, node_id, pot_id, pot_type, event_type, src_ip, data) VALUES ";
    insertMany = db.prepare(sql + Array(ROWS_PER_INSERT).fill(row).join(","));
    insertOne = db.prepare(sql + row);
    self.postMessage({ n: 0 });
    return;
  }
  db.transaction(() => write(m.batch)).immediate();
  self.postMessage({ n: m.batch.n });
};
