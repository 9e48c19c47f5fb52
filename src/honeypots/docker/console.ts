/**
 * A shell reading the stdin of an attached container or exec (`docker exec -it ctr sh`,
 * `echo id | docker run -i alpine sh`): each line is recorded and answered through the shell
 * emulation. With a TTY the shell's side of a terminal is played too: the prompt, the echo of
 * typed keys, backspace, ^C and ^D, CRLF line ends, stderr merged into stdout.
 */
import type { Output } from "./shell.ts";

export interface Printed {
  stream: 1 | 2;
  text: string;
}

export interface ConsoleInput {
  printed: Printed[];
  /** Complete lines typed, for the record. */
  lines: string[];
  /** The shell exited (`exit`, ^D on an empty line). */
  exit: boolean;
}

export interface ConsoleOptions {
  tty: boolean;
  prompt: string;
  /** Longest line kept: the canonical tty's limit (N_TTY_BUF_SIZE - 1). */
  maxLine: number;
  run(line: string): Output;
}

export class Console {
  private line = "";
  /** In an escape sequence (arrow keys and the like), which the emulated line editor ignores. */
  private escape = false;

  constructor(private readonly opts: ConsoleOptions) {}

  open(): Printed[] {
    return this.opts.tty ? [{ stream: 1, text: this.opts.prompt }] : [];
  }

  input(bytes: Uint8Array): ConsoleInput {
    const result: ConsoleInput = { printed: [], lines: [], exit: false };
    const print = (stream: 1 | 2, text: string) => {
      if (text !== "") result.printed.push({ stream: this.opts.tty ? 1 : stream, text: this.opts.tty ? text.replace(/\r?\n/g, "\r\n") : text });
    };
    for (const b of bytes) {
      if (result.exit) break;
      if (this.escape) {
        if (b >= 0x40 && b <= 0x7e && b !== 0x5b) this.escape = false;
        continue;
      }
      if (b === 0x0a || b === 0x0d) {
        if (this.opts.tty) print(1, "\n");
        this.enter(result, print);
      } else if (this.opts.tty && b === 0x1b) {
        this.escape = true;
      } else if (this.opts.tty && (b === 0x7f || b === 0x08)) {
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          print(1, "\b \b");
        }
      } else if (this.opts.tty && b === 0x03) {
        this.line = "";
        print(1, `^C\n${this.opts.prompt}`);
      } else if (this.opts.tty && b === 0x04) {
        if (this.line === "") result.exit = true;
      } else if (b >= 0x20 || b === 0x09 || !this.opts.tty) {
        if (this.line.length >= this.opts.maxLine) continue;
        this.line += String.fromCharCode(b);
        if (this.opts.tty) print(1, String.fromCharCode(b));
      }
    }
    return result;
  }

  /** The stdin ended: a line without its newline still runs, then the shell exits. */
  eof(): ConsoleInput {
    const result: ConsoleInput = { printed: [], lines: [], exit: true };
    if (this.line !== "") this.enter(result, (stream, text) => text !== "" && result.printed.push({ stream, text }));
    return result;
  }

  private enter(result: ConsoleInput, print: (stream: 1 | 2, text: string) => void): void {
    const line = Buffer.from(this.line, "latin1").toString("utf8");
    this.line = "";
    if (line.trim() !== "") {
      result.lines.push(line);
      if (/^\s*(exit|logout)(\s+\d+)?\s*$/.test(line)) {
        result.exit = true;
        return;
      }
      const out = this.opts.run(line);
      print(1, out.stdout);
      print(2, out.stderr);
    }
    if (this.opts.tty) print(1, this.opts.prompt);
  }
}
