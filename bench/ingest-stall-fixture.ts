/**
 * Core's event pipeline (the same parts startCore wires: database, pipeline, writer thread,
 * event socket) with the writer stalled until a line "release" arrives on stdin, to measure
 * memory while many producers push into a writer that has stopped.
 *
 * argv: db path, expected events. Prints {"port"} when listening, then
 * {"done": Date.now(), "max_pending": n} once every expected event is committed.
 */
import { sqliteEventWriting } from "../src/db/writer-channel";
import { defaultCoreConfig } from "../src/config";
import { openDatabase } from "../src/db";
import { MessageBus } from "../src/core/bus";
import { createIngest, startEventSocket } from "../src/core/ingest";
import { silentLogger } from "../src/log";

const [path, expectedArg] = process.argv.slice(2);
const expected = Number(expectedArg);
const config = defaultCoreConfig({ db: path!, log_events: false, event_port: 0 });
const released = Promise.withResolvers<void>();
const db = openDatabase(config.db);
const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger(), writerGate: () => released.promise });
const socket = startEventSocket({ host: "127.0.0.1", port: 0, ingest, config, logger: silentLogger() });
console.log(JSON.stringify({ port: socket.port }));

let maxPending = 0;
const poll = setInterval(() => {
  maxPending = Math.max(maxPending, ingest.counters.pending);
  if (ingest.counters.committed >= expected) {
    clearInterval(poll);
    console.log(JSON.stringify({ done: Date.now(), max_pending: maxPending }));
    void socket.stop().then(() => ingest.stop()).then(() => process.exit(0));
  }
}, 20);

for await (const line of console) {
  if (line.trim() === "release") released.resolve();
}
