/**
 * The event log line is put together by hand for speed (src/log.ts); it must say what pino
 * would have written for the same record.
 */
import { expect, test } from "bun:test";
import { CONTROLS, createLogger, eventLog, type EventLine } from "../../src/log";

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger("info", { destination: { write: (s: string) => void lines.push(s) } }) };
}

test("an event line is what pino writes for the same record", async () => {
  const { lines: chunks, logger } = capture();
  const child = logger.child({ component: "ingest" });
  const e: EventLine = {
    id: 42,
    node_id: "18446744073709551557",
    pot_id: 'pot "quoted" \\ ü',
    pot_type: null,
    event_type: "cowrie.login.failed",
    timestamp: "2026-11-22T01:07:41.947Z",
    src_ip: "203.0.113.7",
  };
  const data = '{"username": "röot", "n": 1.5, "nested": {"a": [1, null]}, "esc": "a\\"b\\u00e9"}';
  const bytes = Buffer.from(`xx${data}yy`);
  eventLog(child, JSON.parse)!(e, bytes, 2, bytes.length - 2);
  child.info({ event: { ...e, data: JSON.parse(data) } }, "event");
  await new Promise((resolve) => setImmediate(resolve)); // lines go out once per event-loop turn
  const lines = chunks.join("").split("\n");
  expect(lines.pop()).toBe("");
  expect(lines).toHaveLength(2);
  const [fast, viaPino] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(typeof fast!.time).toBe("string");
  expect({ ...fast, time: "" }).toEqual({ ...viaPino, time: "" });
  expect(Object.keys(fast!)).toEqual(Object.keys(viaPino!));
});

test("no event lines when the logger is above info", () => {
  expect(eventLog(createLogger("warn", { destination: { write: () => {} } }), JSON.parse)).toBeNull();
});

test("escaping changes nothing in clean data, and leaves no raw control in data that has some", async () => {
  const { lines: chunks, logger } = capture();
  const line = eventLog(logger, JSON.parse)!;
  const e: EventLine = { id: 1, node_id: null, pot_id: "p\u2028", pot_type: null, event_type: "x\u0085", timestamp: "2026-11-22T01:07:41.947Z", src_ip: "1.2.3.4\u2029" };
  const clean = Buffer.from('{"a":"é日本🐝","b":[1,{"c":null}]}');
  const dirty = Buffer.from('{"a":"x\u2028y\u2029z\u0085\u009b\u007f",\r\t"b":\r1}');
  line(e, clean, 0, clean.length, false);
  line(e, clean, 0, clean.length, true);
  line(e, dirty, 0, dirty.length, true);
  await new Promise((resolve) => setImmediate(resolve));
  // The lines may fall on two sides of a millisecond: compared without their time.
  const [plain, escaped, fromDirty] = chunks.join("").split("\n").map((l) => l.replace(/"time":"[^"]*"/, '"time":""'));
  expect(escaped).toBe(plain!);
  for (const l of [plain!, fromDirty!]) expect(l).not.toMatch(CONTROLS);
  expect(JSON.parse(fromDirty!).event).toMatchObject({ pot_id: "p\u2028", event_type: "x\u0085", src_ip: "1.2.3.4\u2029", data: { a: "x\u2028y\u2029z\u0085\u009b\u007f", b: 1 } });
});
