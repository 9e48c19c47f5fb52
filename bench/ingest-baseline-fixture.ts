/**
 * The ingest bench's simple baselines, each a minimal server in its own process:
 * - `discard`: split lines and JSON.parse them, nothing else (the parsing ceiling);
 * - `sqlite` (b): the simple single-process design: parse, then a prepared bun:sqlite INSERT
 *   per row, one transaction per 4096 rows or 5 ms, into a table with no secondary index.
 * Both take every shape the producer sends (bench/ingest-naive.ts) and answer a node's
 * registration, so the control channel's producer can run against them too.
 *
 * argv: mode, expected events, db path (sqlite). Prints {"port", "cpu"} when listening and
 * {"done": Date.now(), "cpu"} once every expected event is parsed (discard) or committed
 * (sqlite); cpu is the process's CPU time so far in µs, all threads. The expected events may
 * be a comma list of running totals ("1000000,3000000": a warm-up, then the measured run):
 * a done line for each.
 */
import { Database } from "bun:sqlite";
import { LineSplitter } from "../src/protocol/framing";
import { doneLines, naiveLine, processCpu, registrationAck, type NaiveRow } from "./ingest-naive";

const [mode, expectedArg, dbPath] = process.argv.slice(2);
// Not exiting after the last: the bench reads this process's peak memory before it ends it.
const reached = doneLines(expectedArg!);
let count = 0;

let onEvent: (row: NaiveRow) => void = () => {
  reached(++count);
};

if (mode === "sqlite") {
  const db = new Database(dbPath!, { strict: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536");
  const insert = db.prepare("INSERT INTO events (ts, node_id, pot_id, pot_type, event_type, src_ip, data) VALUES (?, ?, ?, ?, ?, ?, ?)");
  let rows: NaiveRow[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const commit = db.transaction((batch: NaiveRow[]) => {
    for (const r of batch) insert.run(...r);
  });
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = rows;
    rows = [];
    commit(batch);
    count += batch.length;
    reached(count);
  };
  onEvent = (row) => {
    rows.push(row);
    if (rows.length >= 4096) flush();
    else timer ??= setTimeout(flush, 5);
  };
}

const server = Bun.listen<{ splitter: LineSplitter }>({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open(s) {
      s.data = { splitter: new LineSplitter() };
    },
    data(s, chunk) {
      s.data.splitter.push(chunk, {
        line: (text) => {
          const l = naiveLine(text);
          if (l.kind === "event") onEvent(l.row);
          else if (l.kind === "registration") s.write(registrationAck(l.nodeId));
        },
        oversized: () => {},
      });
    },
  },
});
console.log(JSON.stringify({ port: server.port, cpu: processCpu() }));
