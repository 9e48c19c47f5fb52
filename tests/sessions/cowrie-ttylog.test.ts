import { describe, expect, test } from "bun:test";
import { parseCast } from "../../src/cli/replay";
import { recordingFormat, TtylogError, ttylogToCast } from "../../src/node/cowrie-ttylog";
import { DIRECTION, OP, SESSION_CAST_LINES, sessionTtylog, T0, ttyRecord } from "./ttylog-bytes";

const MAX = 4 * 1024 * 1024;
const text = (r: { cast: Buffer }) => r.cast.toString();

describe("Cowrie ttylog to asciicast v2", () => {
  test("the record header is Cowrie's <iLiiLL, byte for byte", () => {
    // op 3, tty 0, length 2, direction 2, sec 0x6b0a2b5f, usec 500000 (0x0007a120), data "ok".
    expect([...ttyRecord(OP.write, DIRECTION.output, 0x6b0a2b5f, 500_000, "ok")]).toEqual([3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0x5f, 0x2b, 0x0a, 0x6b, 0x20, 0xa1, 0x07, 0x00, 0x6f, 0x6b]);
  });

  test("a session: output and input at their times since the first record, a character split across writes joined", () => {
    const r = ttylogToCast(sessionTtylog(), { maxBytes: MAX });
    expect(text(r)).toBe(`${SESSION_CAST_LINES.join("\n")}\n`);
    expect(r).toMatchObject({ events: 5, truncated: false });
    const cast = parseCast(text(r));
    expect(cast.output.map(([, d]) => d).join("")).toBe("root@web-3:~# uname -a\r\nLinux web-3 café\r\nroot@web-3:~# ");
  });

  test("interact and exec records are left out, nothing after the close counts, a clock set back does not run time backwards", () => {
    const bytes = Buffer.concat([
      ttyRecord(OP.open, DIRECTION.none, T0, 0),
      ttyRecord(OP.write, DIRECTION.output, T0 + 5, 0, "a"),
      ttyRecord(OP.write, DIRECTION.interact, T0 + 6, 0, "operator"),
      ttyRecord(OP.exec, DIRECTION.none, T0 + 6, 0, "x"),
      ttyRecord(OP.write, DIRECTION.output, T0 + 2, 0, "b"),
      ttyRecord(OP.close, DIRECTION.none, T0 + 7, 0),
      ttyRecord(OP.write, DIRECTION.output, T0 + 8, 0, "after"),
    ]);
    expect(text(ttylogToCast(bytes, { maxBytes: MAX }))).toBe(`{"version":2,"width":80,"height":24,"timestamp":${T0}}\n[5,"o","a"]\n[5,"o","b"]\n`);
    // Open and close only: a valid cast with no events.
    expect(text(ttylogToCast(Buffer.concat([ttyRecord(OP.open, 0, T0, 0), ttyRecord(OP.close, 0, T0, 1)]), { maxBytes: MAX }))).toBe(`{"version":2,"width":80,"height":24,"timestamp":${T0}}\n`);
  });

  test("past maxBytes the cast stops at a whole event and stays valid", () => {
    const bytes = Buffer.concat([ttyRecord(OP.open, 0, T0, 0), ...Array.from({ length: 100 }, (_, i) => ttyRecord(OP.write, DIRECTION.output, T0, i, "x".repeat(50)))]);
    const r = ttylogToCast(bytes, { maxBytes: 1000 });
    expect(r.truncated).toBe(true);
    expect(r.cast.length).toBeLessThanOrEqual(1000);
    expect(parseCast(text(r)).output.length).toBe(r.events);
    expect(r.events).toBeGreaterThan(5);
  });

  test("garbage and damaged files are refused with the reason; a file read only in part ends where it was cut", () => {
    const whole = sessionTtylog();
    const refused = (bytes: Uint8Array) => {
      try {
        ttylogToCast(bytes, { maxBytes: MAX });
        return "converted";
      } catch (e) {
        expect(e).toBeInstanceOf(TtylogError);
        return (e as Error).message;
      }
    };
    expect(refused(Buffer.from("GIF89a garbage that is no ttylog at all"))).toMatch(/^not a Cowrie tty log/);
    expect(refused(Buffer.alloc(0))).toMatch(/^not a Cowrie tty log/);
    expect(refused(ttyRecord(OP.open, 0, T0, 0).subarray(0, 10))).toMatch(/^not a Cowrie tty log/);
    expect(refused(whole.subarray(0, whole.length - 30))).toMatch(/^cut off: the record at offset \d+ announces \d+ bytes of data, \d+ follow$/);
    expect(refused(whole.subarray(0, 24 + 24 + 14 + 10))).toMatch(/^cut off: 10 bytes at offset 62 are less than a record header/);
    const badOp = Buffer.from(whole);
    badOp.writeInt32LE(9, 24);
    expect(refused(badOp)).toBe("damaged: the record at offset 24 has operation 9, not 1-4");
    const negative = Buffer.from(whole);
    negative.writeInt32LE(-5, 24 + 8);
    expect(refused(negative)).toBe("damaged: the record at offset 24 has a negative length -5");
    const usec = Buffer.from(whole);
    usec.writeUInt32LE(2_000_000, 24 + 20);
    expect(refused(usec)).toBe("damaged: the record at offset 24 has 2000000 microseconds");
    // Random bytes behind a valid first record: refused, never a crash.
    let seed = 7;
    const byte = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0xff;
    for (let i = 0; i < 200; i++) {
      const noise = Buffer.concat([ttyRecord(OP.open, 0, T0, 0), Buffer.from(Array.from({ length: 1 + ((i * 37) % 300) }, byte))]);
      expect(typeof refused(noise)).toBe("string");
    }

    const partial = ttylogToCast(whole.subarray(0, whole.length - 30), { maxBytes: MAX, partial: true });
    expect(partial.truncated).toBe(true);
    expect(text(partial)).toBe(`${SESSION_CAST_LINES.slice(0, 5).join("\n")}\n`);
  });

  test("the format is told by the first bytes: asciicast, ttylog, or neither", () => {
    expect(recordingFormat(Buffer.from('{"version":2,"width":80,"height":24}\n'))).toBe("asciicast");
    expect(recordingFormat(sessionTtylog())).toBe("ttylog");
    expect(recordingFormat(ttyRecord(5, 0, T0, 0))).toBeNull();
    expect(recordingFormat(ttyRecord(OP.open, 0, T0, 0).subarray(0, 23))).toBeNull();
    expect(recordingFormat(Buffer.from("\x01\x00\x00\x01rest of some other file.........."))).toBeNull();
    expect(recordingFormat(Buffer.alloc(0))).toBeNull();
  });
});
