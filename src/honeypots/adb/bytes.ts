/**
 * Bytes received and not yet parsed, kept as the chunks they came in: a peer that sends a 64 KiB
 * message one byte per WRTE costs one append per byte, not a copy of everything held so far.
 */
export class ByteQueue {
  private parts: Buffer[] = [];
  length = 0;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.length += chunk.length;
  }

  /** The first `n` bytes (n <= length), merging only the chunks that hold them. */
  peek(n: number): Buffer {
    let first = this.parts[0] as Buffer;
    if (first.length < n) {
      let count = 0;
      let size = 0;
      while (size < n) size += (this.parts[count++] as Buffer).length;
      first = Buffer.concat(this.parts.slice(0, count));
      this.parts.splice(0, count, first);
    }
    return first.subarray(0, n);
  }

  /** Removes and returns the first `n` bytes (n <= length), as a copy of its own. */
  take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const out = Buffer.from(this.peek(n));
    const first = this.parts[0] as Buffer;
    if (first.length === n) this.parts.shift();
    else this.parts[0] = first.subarray(n);
    this.length -= n;
    return out;
  }

  clear(): void {
    this.parts = [];
    this.length = 0;
  }
}
