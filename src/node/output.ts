/**
 * Child process output: copied to a log file as it arrives, with the last few kilobytes kept in
 * memory so a failure message can quote them (an install step's last lines, a crashed
 * honeypot's stderr).
 */
import { closeSync, mkdirSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export class Tail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBytes = 8192) {}

  push(chunk: Uint8Array): void {
    const b = Buffer.from(chunk);
    this.chunks.push(b);
    this.size += b.length;
    while (this.size - this.chunks[0]!.length >= this.maxBytes) this.size -= this.chunks.shift()!.length;
  }

  /** The last `n` non-empty lines, joined with " | " to fit a one-line status message. */
  lines(n: number): string {
    return lastLines(Buffer.concat(this.chunks).toString("utf8"), n);
  }
}

/** The last `n` non-empty lines of a text, joined with " | " for a one-line message. */
export function lastLines(text: string, n: number): string {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(" | ");
}

/** Opens a log file for appending, creating its folder. */
export function openLog(path: string): number {
  mkdirSync(dirname(path), { recursive: true });
  return openSync(path, "a");
}

export function closeLog(fd: number): void {
  try {
    closeSync(fd);
  } catch {}
}

/**
 * Reads a child's stream to its end: every chunk to `fd` and `tail`, and to `onChunk` while
 * it returns true (the supervisor stops looking for the ready line once it has seen it).
 */
export async function drainTo(stream: ReadableStream<Uint8Array>, fd: number, tail: Tail | null, onChunk?: (chunk: Uint8Array) => boolean): Promise<void> {
  let watching = onChunk !== undefined;
  for await (const chunk of stream) {
    try {
      writeSync(fd, chunk);
    } catch {}
    tail?.push(chunk);
    if (watching) watching = onChunk!(chunk);
  }
}

/**
 * Keeps one older generation of a log once it passes `maxBytes` (checked at each start), so a
 * honeypot that logs a lot over months cannot fill the node's disk.
 */
export function rotateIfLarge(path: string, maxBytes = 16 * 1024 * 1024): void {
  try {
    if (statSync(path).size > maxBytes) renameSync(path, `${path}.1`);
  } catch {}
}
