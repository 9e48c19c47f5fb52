/**
 * Cowrie's tty log records, built from the layout cowrie/core/ttylog.py writes (struct
 * `<iLiiLL`): a 24-byte little-endian header (op int32, tty uint32, length int32, direction
 * int32, sec uint32, usec uint32), then `length` bytes of data.
 */
export const OP = { open: 1, close: 2, write: 3, exec: 4 } as const;
export const DIRECTION = { none: 0, input: 1, output: 2, interact: 3 } as const;

export function ttyRecord(op: number, direction: number, sec: number, usec: number, data: string | Uint8Array = ""): Buffer {
  const body = Buffer.from(data);
  const b = Buffer.alloc(24 + body.length);
  b.writeInt32LE(op, 0);
  b.writeUInt32LE(0, 4);
  b.writeInt32LE(body.length, 8);
  b.writeInt32LE(direction, 12);
  b.writeUInt32LE(sec, 16);
  b.writeUInt32LE(usec, 20);
  body.copy(b, 24);
  return b;
}

export const T0 = 1795309663;

/**
 * A shell session as Cowrie records it: the prompt, a command typed (input, then its echo as
 * output), its answer with an "é" whose two bytes fall in two writes, and the close.
 */
export function sessionTtylog(): Buffer {
  return Buffer.concat([
    ttyRecord(OP.open, DIRECTION.none, T0, 100_000),
    ttyRecord(OP.write, DIRECTION.output, T0, 100_000, "root@web-3:~# "),
    ttyRecord(OP.write, DIRECTION.input, T0 + 1, 350_000, "uname -a\r"),
    ttyRecord(OP.write, DIRECTION.output, T0 + 1, 350_200, "uname -a\r\n"),
    ttyRecord(OP.write, DIRECTION.output, T0 + 2, 1, Buffer.from([...Buffer.from("Linux web-3 caf"), 0xc3])),
    ttyRecord(OP.write, DIRECTION.output, T0 + 2, 2, Buffer.from([0xa9, ...Buffer.from("\r\nroot@web-3:~# ")])),
    ttyRecord(OP.close, DIRECTION.none, T0 + 3, 0),
  ]);
}

/** The asciicast v2 the node makes of sessionTtylog(), line by line. */
export const SESSION_CAST_LINES = [
  `{"version":2,"width":80,"height":24,"timestamp":${T0}}`,
  `[0,"o","root@web-3:~# "]`,
  `[1.25,"i","uname -a\\r"]`,
  `[1.2502,"o","uname -a\\r\\n"]`,
  `[1.900001,"o","Linux web-3 caf"]`,
  `[1.900002,"o","é\\r\\nroot@web-3:~# "]`,
];
