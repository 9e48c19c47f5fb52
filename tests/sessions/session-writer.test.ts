import { expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/db";
import { EventWriter } from "../../src/db/event-writer";
import { type EventBatch, SEG_SIZE } from "../../src/db/event-store";
import { SessionQueries } from "../../src/db/session-queries";
import { SESSION_ID, sessionAt, sessionKey, sessionKeyAt, sessionOf, SessionScan } from "../../src/db/session-fields";
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

/** A batch of the given data (text, or raw bytes), typed by `types` (ids of `cowrie.login.success` 1, `cowrie.command.input` 2). */
function rawBatch(data: (string | Uint8Array)[], types: number[], first: boolean): EventBatch {
  const bytes = data.map((d) => (typeof d === "string" ? new TextEncoder().encode(d) : d));
  const all = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0) + 16);
  let end = 0;
  const dataEnds = new Int32Array(bytes.map((b) => (all.set(b, end), (end += b.length))));
  return {
    n: data.length,
    ts: new Float64Array(data.map((_, i) => Date.UTC(2026, 10, 22) + i)),
    sourceId: new Int32Array(data.length).fill(1),
    typeId: new Int32Array(types),
    srcIps: data.map(() => "203.0.113.5").join("\n"),
    data: all.buffer as ArrayBuffer,
    dataEnds,
    credCounts: "",
    newSources: first ? [{ id: 1, nodeId: "7", potId: "ssh-01", potType: "cowrie" }] : [],
    newTypes: first
      ? [
          { id: 1, name: "cowrie.login.success" },
          { id: 2, name: "cowrie.command.input" },
        ]
      : [],
    spools: [],
  };
}

test("event data is stored as the text it arrived as (non-ASCII, invalid UTF-8 as U+FFFD), and sessions and credentials are read from it", () => {
  using dir = tempDir();
  const db = openDatabase(join(dir.path, "core.db"));
  try {
    const writer = new EventWriter(db);
    const valid = [
      `{"message":"héllo ✓ 🐝","session": "a1"}`,
      `{"username":"jösé 🐝","password":"pä","session":"a2"}`,
      `{"x":"\\"session\\": \\"no\\"", "session" : "a3"}`,
      `{"session":"${"x".repeat(65)}"}`,
      `{"session":"é1"}`,
      `{"input":"ls","message":"session"}`,
      `{"input":"id","session":"a1"}`,
    ];
    writer.write(rawBatch(valid, [2, 1, 2, 2, 2, 2, 2], true));
    // Not UTF-8: a lone continuation byte and a truncated sequence.
    const invalid = Uint8Array.from([...new TextEncoder().encode(`{"m":"`), 0x80, 0xe2, 0x9c, ...new TextEncoder().encode(`","session":"a4"}`)]);
    writer.write(rawBatch([invalid, `{"session":"a4","input":"w"}`], [2, 2], false));
    const rows = db.$client.query("select typeof(data) as type, data from events order by id").all() as { type: string; data: string }[];
    expect(rows.map((r) => r.type)).toEqual(Array(9).fill("text"));
    expect(rows.map((r) => r.data)).toEqual([...valid, Buffer.from(invalid).toString("utf8"), `{"session":"a4","input":"w"}`]);
    expect(rows[7]!.data).toBe(`{"m":"\uFFFD\uFFFD","session":"a4"}`);
    // The JSON functions read it as text.
    expect(db.$client.query("select json_extract(data, '$.username') as u from events where id = 2").get()).toEqual({ u: "jösé 🐝" });
    const page = new SessionQueries(db).list({}, 10, null);
    expect(page.sessions.map((s) => [s.session, s.events, s.commands, s.username, s.password]).sort()).toEqual([
      ["a1", 2, 2, null, null],
      ["a2", 1, 0, "jösé 🐝", "pä"],
      ["a3", 1, 1, null, null],
      ["a4", 2, 2, null, null],
    ]);
  } finally {
    db.$client.close();
  }
});

test("the writer's session id from a batch's bytes is the one read from the event's text (once checked)", () => {
  const cases = [
    `{"session":"abc"}`,
    `{"session" :  "abc" ,"x":1}`,
    `{"a":"session","session":"s1"}`,
    `{"a":"\\"session\\"","session":"s2"}`,
    `{"a":"\\"session\\":\\"fake\\"","session":"s3"}`,
    `{"session":1}`,
    `{"session":"${"y".repeat(64)}"}`,
    `{"session":"${"y".repeat(65)}"}`,
    `{"session":"é"}`,
    `{"é":"ü","session":"after-non-ascii"}`,
    `{"session":"unterminated`,
    `{"session"`,
    `{"session":`,
    `{"no":"key"}`,
    `{}`,
  ];
  // One buffer, as the writer gets it: a search must not run into the next event.
  const bytes = Buffer.from(cases.join(""));
  let from = 0;
  for (const c of cases) {
    const to = from + Buffer.byteLength(c);
    const scan = new SessionScan();
    const id = scan.find(bytes, from, to) ? sessionAt(bytes, scan) : null;
    // Unchecked, a non-ASCII id reads differently (bytes as Latin-1); no such id is a session.
    expect([c, id !== null && SESSION_ID.test(id) ? id : null]).toEqual([c, sessionOf(c)]);
    if (id !== null) expect(sessionKeyAt(bytes, scan)).toBe(sessionKey(id));
    from = to;
  }
});

test("session ids as the writer's keys: the same key only for the same id", () => {
  const ids = ["0", "00", "000", "a", "0a", "00a", "a0", "f", "ff", "A", "0A", "ffffffffffff", "0fffffffffff", "fffffffffff", "1ffffffffffff", "000000000000", "00000000000", "abc-1", "abc", "ab c", "g", "é"];
  const keys = ids.map(sessionKey);
  expect(new Set(keys).size).toBe(ids.length);
  // Cowrie's ids are numbers, others stay text.
  expect(typeof sessionKey("a1b2c3d4e5f6")).toBe("number");
  expect(keys.filter((k) => typeof k === "string")).toEqual(["A", "0A", "1ffffffffffff", "abc-1", "ab c", "g", "é"]);
  for (const id of ids) {
    const bytes = Buffer.from(`{"session":"${id}"}`, "latin1");
    const scan = new SessionScan();
    expect(scan.find(bytes, 0, bytes.length)).toBe(true);
    expect(sessionKeyAt(bytes, scan)).toBe(sessionKey(id));
  }
});

test("sessions of the same id from two sources, and ids that look alike, stay apart", () => {
  using dir = tempDir();
  const db = openDatabase(join(dir.path, "core.db"));
  try {
    const writer = new EventWriter(db);
    const data = ["0a", "00a", "a", "A", "0a", "a"].map((s) => `{"session":"${s}"}`);
    const b = rawBatch(data, [2, 2, 2, 2, 2, 2], true);
    b.newSources.push({ id: 2, nodeId: "7", potId: "ssh-02", potType: "cowrie" });
    b.sourceId.set([1, 1, 1, 1, 2, 1]);
    writer.write(b);
    writer.write(rawBatch([`{"session":"0a"}`], [2], false));
    const rows = db.$client.query("select session, source_id as source, events from sessions order by id").all();
    expect(rows).toEqual([
      { session: "0a", source: 1, events: 2 },
      { session: "00a", source: 1, events: 1 },
      { session: "a", source: 1, events: 2 },
      { session: "A", source: 1, events: 1 },
      { session: "0a", source: 2, events: 1 },
    ]);
  } finally {
    db.$client.close();
  }
});

test("a session over several batches sums up what each adds, batches with only events and those with a login or commands alike", () => {
  using dir = tempDir();
  const db = openDatabase(join(dir.path, "core.db"));
  try {
    const writer = new EventWriter(db);
    const types = [
      { id: 1, name: "cowrie.login.success" },
      { id: 2, name: "cowrie.command.input" },
      { id: 3, name: "cowrie.session.connect" },
      { id: 4, name: "cowrie.session.closed" },
    ];
    const write = (data: string[], typeIds: number[], ips: string[], tsOffset: number) => {
      const b = rawBatch(data, typeIds, false);
      b.srcIps = ips.join("\n");
      b.ts = new Float64Array(data.map((_, i) => Date.UTC(2026, 10, 22) + tsOffset + i));
      return writer.write(b);
    };
    const first = rawBatch([`{"session":"s1"}`], [3], true);
    first.newTypes = types.splice(0);
    first.srcIps = "";
    writer.write(first);
    // Only events (an address now), then events in the next segment.
    write([`{"session":"s1","m":1}`, `{"session":"s1","m":2}`], [3, 3], ["203.0.113.9", "203.0.113.10"], 10);
    write(Array(SEG_SIZE).fill(`{"other":1}`), Array(SEG_SIZE).fill(3), Array(SEG_SIZE).fill(""), 20);
    write([`{"session":"s1","m":3}`], [3], [""], -5);
    // A login and commands, then only events again, then the end.
    write([`{"session":"s1","username":"root","password":"x"}`, `{"session":"s1","input":"ls"}`, `{"session":"s1","input":"id"}`], [1, 2, 2], ["", "", ""], 30);
    write([`{"session":"s1","username":"other","password":"y"}`, `{"session":"s1","m":4}`], [1, 3], ["", ""], 40);
    write([`{"session":"s1"}`], [4], [""], 50);
    const row = db.$client.query("select * from sessions").get();
    expect(row).toEqual({
      id: 1,
      source_id: 1,
      session: "s1",
      src_ip: "203.0.113.9",
      start_ts: Date.UTC(2026, 10, 22) - 5,
      end_ts: Date.UTC(2026, 10, 22) + 50,
      first_event_id: 1,
      last_event_id: SEG_SIZE + 10,
      events: 10,
      login_success: 1,
      username: "root",
      password: "x",
      commands: 2,
      files: 0,
      ttylog: 0,
      closed: 1,
      segs: "0,1",
    });
  } finally {
    db.$client.close();
  }
});
