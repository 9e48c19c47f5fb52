/**
 * Drives line-based interaction over a stream (an SSH channel or a Telnet socket): feeds bytes to
 * the line editor, hands complete lines to the current handler, and keeps two bounds. Output: when
 * the peer stops reading, input processing stops too (the rest of the chunk waits, the stream is
 * paused) until the output drains, so `cat /proc/cpuinfo` repeated by a non-reading client cannot
 * pile up in memory. Input: past `maxInput` bytes the session is ended, as a flood would be.
 */
import type { Duplex } from "node:stream";
import { LineEditor, type LineEvent } from "./lineedit.ts";
import type { CowrieSession } from "./session.ts";
import { motd } from "./shell/host.ts";
import type { Shell, ShellResult } from "./shell/shell.ts";

export interface TerminalIo {
  /** Flow control of the underlying connection. */
  stream: Duplex;
  write(data: string | Uint8Array): void;
  /** A separate error stream (an SSH channel without a pty); without one, errors go to `write`. */
  writeError?: (text: string) => void;
  end(status: number): void;
}

export interface TerminalLimits {
  maxLine: number;
  maxInput: number;
}

/** A handler that returns a promise (a line with downloads) holds further input until it settles. */
export type LineHandler = (event: LineEvent) => void | Promise<void>;

export class Terminal {
  readonly editor: LineEditor;
  handler: LineHandler = () => {};
  private received = 0;
  private waiting: Uint8Array | null = null;
  private inputEnded = false;
  private ended = false;

  constructor(
    readonly io: TerminalIo,
    private readonly limits: TerminalLimits,
    echo: boolean,
  ) {
    this.editor = new LineEditor((data) => io.write(data), limits.maxLine, echo);
  }

  feed(chunk: Uint8Array): void {
    if (this.ended) return;
    this.received += chunk.length;
    if (this.received > this.limits.maxInput) {
      this.end(1);
      return;
    }
    if (this.waiting) this.waiting = Buffer.concat([this.waiting, chunk]);
    else this.process(chunk);
  }

  /** The peer will send no more: run what is left of the last line, then end as on EOF. */
  endInput(): void {
    this.inputEnded = true;
    if (!this.waiting) this.finishInput();
  }

  end(status: number): void {
    if (this.ended) return;
    this.ended = true;
    this.io.end(status);
  }

  private process(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const event = this.editor.push(chunk[i]!);
      if (!event) continue;
      const busy = this.handler(event);
      if (this.ended) return;
      if (busy) {
        this.waiting = chunk.subarray(i + 1);
        this.io.stream.pause();
        busy.then(
          () => this.resume(),
          () => this.resume(),
        );
        return;
      }
      if (this.io.stream.writableNeedDrain) {
        this.waiting = chunk.subarray(i + 1);
        this.io.stream.pause();
        this.io.stream.once("drain", () => this.resume());
        return;
      }
    }
  }

  private resume(): void {
    if (this.ended) return;
    const rest = this.waiting ?? new Uint8Array(0);
    this.waiting = null;
    this.process(rest);
    if (this.waiting || this.ended) return;
    if (this.inputEnded) this.finishInput();
    else this.io.stream.resume();
  }

  private finishInput(): void {
    const last = this.editor.flush();
    const busy = last && !this.ended ? this.handler(last) : undefined;
    const eof = () => {
      if (!this.ended) this.handler({ type: "eof" });
    };
    if (busy) busy.then(eof, eof);
    else eof();
  }
}

export interface ShellModeOptions {
  /** A login shell at a prompt, rather than bash reading a script from stdin. */
  interactive: boolean;
}

/** Hands the terminal to the fake shell: banner and prompt, then one command per line. */
export function runShell(terminal: Terminal, shell: Shell, session: CowrieSession, opts: ShellModeOptions): void {
  const newline = (text: string) => (shell.tty ? text.replace(/\r?\n/g, "\r\n") : text);
  const prompt = () => {
    if (opts.interactive) terminal.io.write(shell.prompt());
  };
  const answer = (result: ShellResult) => {
    const { writeError } = terminal.io;
    if (writeError && !shell.tty) {
      if (result.stdout) terminal.io.write(result.stdout);
      if (result.stderr) writeError(result.stderr);
    } else if (result.output) terminal.io.write(newline(result.output));
    if (!result.exit) prompt();
    else {
      // bash says goodbye when a login shell exits.
      if (opts.interactive) terminal.io.write("logout\r\n");
      terminal.end(result.status);
    }
  };
  terminal.handler = (event) => {
    if (event.type === "line") {
      const result = session.command(shell, event.text);
      if (result instanceof Promise) return result.then(answer);
      answer(result);
    } else if (event.type === "interrupt") {
      if (opts.interactive) terminal.io.write("\r\n");
      prompt();
    } else {
      if (opts.interactive) terminal.io.write("logout\r\n");
      terminal.end(shell.status);
    }
  };
  if (opts.interactive) terminal.io.write(newline(motd(shell.hostname, shell.now())));
  prompt();
}
