/**
 * adb's shell protocol (feature shell_v2), spoken on `shell,v2,...:` streams: packets of a one-byte
 * id, a 32-bit little-endian length and the data, so stdout, stderr and the exit code travel
 * apart and stdin can be closed without closing the stream (shell_protocol.h).
 */
import { ByteQueue } from "./bytes.ts";

export const SHELL_STDIN = 0;
export const SHELL_STDOUT = 1;
export const SHELL_STDERR = 2;
export const SHELL_EXIT = 3;
export const SHELL_CLOSE_STDIN = 4;
export const SHELL_WINDOW_SIZE = 5;

const HEADER = 5;

export interface ShellPacket {
  id: number;
  data: Buffer;
}

export function shellPacket(id: number, data: Uint8Array | string): Buffer {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const out = Buffer.alloc(HEADER + bytes.length);
  out[0] = id;
  out.writeUInt32LE(bytes.length, 1);
  out.set(bytes, HEADER);
  return out;
}

/**
 * Packets from the stream's bytes, which need not be cut at packet boundaries. A packet longer
 * than `maxData` (adbd's buffer is MAX_PAYLOAD) makes `push` answer null: the peer is broken.
 */
export class ShellPacketDecoder {
  private readonly buffer = new ByteQueue();

  constructor(private readonly maxData: number) {}

  push(chunk: Uint8Array): ShellPacket[] | null {
    this.buffer.push(chunk);
    const out: ShellPacket[] = [];
    while (this.buffer.length >= HEADER) {
      const header = this.buffer.peek(HEADER);
      const length = header.readUInt32LE(1);
      if (length > this.maxData) return null;
      if (this.buffer.length < HEADER + length) break;
      const id = header[0] as number;
      out.push({ id, data: this.buffer.take(HEADER + length).subarray(HEADER) });
    }
    return out;
  }
}
