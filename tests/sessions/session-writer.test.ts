import { expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/db";
import { EventWriter } from "../../src/db/event-writer";
import type { EventBatch } from "../../src/db/event-store";
import { SessionQueries } from "../../src/db/session-queries";
import { tempDir } from "../helpers";

/** A batch of cowrie events, one per session id given, from source 1. */
function batch(sessions: string[], first: boolean): EventBatch {
  const data = sessions.map((s) => `{"session": "${s}", "username": "root", "password": "pw"}`);
  let end = 0;
  return {
    n: data.length,
    ts: new Float64Array(data.map((_, i) => Date.UTC(2026, 10, 22) + i)),
    sourceId: new Int32Array(data.length).fill(1),
    typeId: new Int32Array(data.length).fill(1),
    srcIps: data.map(() => "203.0.113.5").join("\n"),
    data: new TextEncoder().encode(data.join("")).buffer as ArrayBuffer,
    dataEnds: new Int32Array(data.map((d) => (end += d.length))),
    credCounts: "",
    newSources: first ? [{ id: 1, nodeId: "7", potId: "ssh-01", potType: "cowrie" }] : [],
    newTypes: first ? [{ id: 1, name: "cowrie.login.success" }] : [],
    spools: [],
  };
}

test("a batch whose transaction rolls back leaves no session behind in the writer's memory either", () => {
  using dir = tempDir();
  const db = openDatabase(join(dir.path, "core.db"));
  try {
    const writer = new EventWriter(db);
    // A real failure inside the batch's transaction, after its first session row is written.
    db.$client.exec(`CREATE TRIGGER boom BEFORE INSERT ON sessions WHEN NEW.session = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`);
    expect(() => writer.write(batch(["first", "boom"], true))).toThrow("boom");
    db.$client.exec("DROP TRIGGER boom");
    // The pipeline sends the failed batch again, then the next one.
    writer.write(batch(["first", "boom"], true));
    writer.write(batch(["first", "second"], false));
    const q = new SessionQueries(db);
    const page = q.list({}, 10, null);
    expect(page.sessions.map((s) => [s.session, s.events, s.login_success, s.username])).toEqual([
      ["second", 1, true, "root"],
      ["boom", 1, true, "root"],
      ["first", 2, true, "root"],
    ]);
    expect(q.events(page.sessions[2]!).map((e) => e.id)).toEqual([1, 3]);
  } finally {
    db.$client.close();
  }
});
