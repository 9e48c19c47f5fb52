/**
 * The ingest bench's baselines, each a minimal server in its own process:
 * - `discard`: split lines and JSON.parse them, nothing else (the parsing ceiling);
 * - `sqlite`: the simple single-process design: parse, then a prepared bun:sqlite INSERT,
 *   one transaction per 4096 rows or 5 ms, into a table with no secondary index.
 *
 * argv: mode, expected events, db path (sqlite). Prints {"port"} when listening and
 * {"done": Date.now()} once every expected event is parsed (discard) or committed (sqlite).
 */
import { Database } from "bun:sqlite";
import { LineSplitter } from "../src/protocol/framing";

const [mode, expectedArg, dbPath] = process.argv.slice(2);
const expected = Number(expectedArg);
let count = 0;

const finish = () => {
  console.log(JSON.stringify({ done: Date.now() }));
  process.exit(0);
};

let onEvent: (o: Record<string, unknown>, line: string) => void = () => {
  if (++count === expected) finish();
};

if (mode === "sqlite") {
  const db = new Database(dbPath!, { strict: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536");
  const insert = db.prepare("INSERT INTO events (ts, node_id, pot_id, pot_type, event_type, src_ip, data) VALUES (?, ?, ?, ?, ?, ?, ?)");
  let rows: unknown[][] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const commit = db.transaction((batch: unknown[][]) => {
    for (const r of batch) insert.run(...(r as [number, string, string, string, string, string, string]));
  });
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = rows;
    rows = [];
    commit(batch);
    count += batch.length;
    if (count === expected) finish();
  };
  onEvent = (o, line) => {
    rows.push([Date.parse(o.timestamp as string), String(o.node_id), o.pot_id, o.pot_type, o.eventid, o.src_ip, line]);
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
          const o = JSON.parse(text);
          if (o.eventid) onEvent(o, text);
        },
        oversized: () => {},
      });
    },
  },
});
console.log(JSON.stringify({ port: server.port }));
