/**
 * What a terminal's line discipline does for a login shell: collects a line, echoes what is typed
 * (when the client left echo to the server, as a pty and a negotiated Telnet session do), and turns
 * Backspace, ^C, ^D and ^U into edits or events. Arrow keys and other escape sequences are dropped,
 * since the fake shell has no history editing.
 */

export type LineEvent = { type: "line"; text: string } | { type: "interrupt" } | { type: "eof" };

const CR = 0x0d;
const LF = 0x0a;
const NUL = 0x00;
const ESC = 0x1b;

export class LineEditor {
  echo: boolean;
  private bytes: number[] = [];
  private afterCr = false;
  /** 0: none, 1: after ESC, 2: inside a CSI/SS3 sequence. */
  private escape = 0;

  /** `maxLine` is the canonical tty's 4095: longer input is dropped, as the kernel drops it. */
  constructor(
    private readonly output: (data: string | Uint8Array) => void,
    private readonly maxLine: number,
    echo: boolean,
  ) {
    this.echo = echo;
  }

  push(byte: number): LineEvent | null {
    if (this.escape === 1) {
      this.escape = byte === 0x5b || byte === 0x4f ? 2 : 0;
      return null;
    }
    if (this.escape === 2) {
      if (byte >= 0x40 && byte <= 0x7e) this.escape = 0;
      return null;
    }
    // Telnet ends a line with CR LF or CR NUL; a pty sends a bare CR. All three are one Enter.
    if (this.afterCr) {
      this.afterCr = false;
      if (byte === LF || byte === NUL) return null;
    }
    switch (byte) {
      case CR:
        this.afterCr = true;
        return this.finish();
      case LF:
        return this.finish();
      case 0x03:
        this.bytes = [];
        if (this.echo) this.output("^C");
        return { type: "interrupt" };
      case 0x04:
        return this.bytes.length === 0 ? { type: "eof" } : null;
      case 0x7f:
      case 0x08:
        this.erase(1);
        return null;
      case 0x15:
        this.erase(this.bytes.length);
        return null;
      case ESC:
        this.escape = 1;
        return null;
    }
    if (byte < 0x20 || this.bytes.length >= this.maxLine) return null;
    this.bytes.push(byte);
    if (this.echo) this.output(Uint8Array.of(byte));
    return null;
  }

  /** The unfinished line at end of input, if any; bash runs a last line without its newline. */
  flush(): LineEvent | null {
    return this.bytes.length > 0 ? this.finish() : null;
  }

  private finish(): LineEvent {
    const text = Buffer.from(this.bytes).toString("utf8");
    this.bytes = [];
    if (this.echo) this.output("\r\n");
    return { type: "line", text };
  }

  /** Removes whole UTF-8 characters, so one Backspace after "é" removes both of its bytes. */
  private erase(chars: number): void {
    for (let n = 0; n < chars && this.bytes.length > 0; n++) {
      while (this.bytes.length > 0 && ((this.bytes.pop() as number) & 0xc0) === 0x80);
      if (this.echo) this.output("\b \b");
    }
  }
}
