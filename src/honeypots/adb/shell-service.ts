/**
 * The `shell:` and `exec:` services. Three shapes, as adbd's ShellService makes them:
 * - a command (`shell:CMD`, `shell,v2,raw:CMD`, `exec:CMD`): run, print, close;
 * - an interactive shell with a terminal (`shell:`, `shell,v2,pty:`): a prompt, the terminal's
 *   echo and line editing, CRLF line ends, until `exit` or ^D;
 * - a shell reading commands from stdin without a terminal (`shell,v2,raw:`, what `adb shell`
 *   asks for when its stdin is a pipe): no prompt, no echo, until stdin is closed.
 * With v2 (shell protocol) stdout and stderr travel apart and the exit status closes the stream.
 * Every line is recorded as adb.command.input; nothing is run.
 */
import { AndroidShell, type Chunk, textOf } from "./shell.ts";
import { SHELL_CLOSE_STDIN, SHELL_EXIT, SHELL_STDERR, SHELL_STDIN, SHELL_STDOUT, ShellPacketDecoder, shellPacket } from "./shell-protocol.ts";
import { MAX_PAYLOAD } from "./protocol.ts";
import { type DeviceContext, recordInput, type Service, type StreamIO } from "./stream.ts";

/** Linux's canonical-mode line limit: a terminal drops what is typed past it. */
const PTY_LINE_MAX = 4095;
/** A line read from a pipe is cut here (the rest of it is dropped) so a flood stays bounded. */
const PIPE_LINE_MAX = 64 * 1024;

export interface ShellOptions {
  /** The shell protocol (feature shell_v2). */
  v2: boolean;
  pty: boolean;
  /** The command to run; empty for an interactive shell. */
  command: string;
  /** How the service was named in the OPEN, for the event ("shell", "shell,v2,pty", "exec"). */
  service: string;
}

export class ShellService implements Service {
  private readonly shell: AndroidShell;
  private readonly decoder: ShellPacketDecoder | null;
  private line: number[] = [];
  private done = false;

  constructor(
    private readonly io: StreamIO,
    private readonly ctx: DeviceContext,
    private readonly opts: ShellOptions,
  ) {
    this.shell = new AndroidShell(ctx.fs, ctx.props, ctx.product);
    this.decoder = opts.v2 ? new ShellPacketDecoder(MAX_PAYLOAD) : null;
  }

  start(): this {
    if (this.opts.command.trim() !== "") this.finish(this.runLine(this.opts.command));
    else if (this.opts.pty) this.print([{ fd: 1, text: this.shell.prompt }]);
    // exec: with no command runs nothing and ends.
    else if (this.opts.service === "exec") this.finish(0);
    return this;
  }

  data(bytes: Buffer): void {
    if (this.done) return;
    if (!this.decoder) {
      this.stdin(bytes);
      return;
    }
    const packets = this.decoder.push(bytes);
    if (!packets) {
      this.finish(1);
      return;
    }
    for (const packet of packets) {
      if (this.done) return;
      if (packet.id === SHELL_STDIN) this.stdin(packet.data);
      else if (packet.id === SHELL_CLOSE_STDIN) this.endOfInput();
    }
  }

  closed(): void {
    this.done = true;
  }

  /** Bytes typed or piped in; a one-shot command ignores them, as `getprop` ignores its stdin. */
  private stdin(bytes: Uint8Array): void {
    if (this.opts.command.trim() !== "") return;
    for (const b of bytes) {
      if (this.done) return;
      if (!this.opts.pty) {
        if (b === 0x0a) this.enter();
        else if (this.line.length < PIPE_LINE_MAX) this.line.push(b);
        continue;
      }
      if (b === 0x0d || b === 0x0a) {
        this.print([{ fd: 1, text: "\r\n" }]);
        this.enter();
      } else if (b === 0x7f || b === 0x08) {
        if (this.line.length > 0) {
          this.line.pop();
          this.print([{ fd: 1, text: "\b \b" }]);
        }
      } else if (b === 0x03) {
        this.line = [];
        this.shell.status = 130;
        this.print([{ fd: 1, text: `^C\r\n${this.shell.prompt}` }]);
      } else if (b === 0x04) {
        if (this.line.length === 0) this.finish(this.shell.status);
      } else if (b === 0x15) {
        this.print([{ fd: 1, text: "\b \b".repeat(this.line.length) }]);
        this.line = [];
      } else if (this.line.length < PTY_LINE_MAX && (b >= 0x20 || b === 0x09)) {
        this.line.push(b);
        this.io.write(this.frame(SHELL_STDOUT, Buffer.of(b)));
      }
    }
  }

  private enter(): void {
    const text = Buffer.from(this.line).toString("utf8").replace(/\r$/, "");
    this.line = [];
    const result = this.runLine(text);
    if (typeof result === "number") {
      this.finish(result);
      return;
    }
    if (this.opts.pty) this.print([{ fd: 1, text: this.shell.prompt }]);
  }

  /** Stdin closed: a pending line still runs, then the shell exits with the last status. */
  private endOfInput(): void {
    if (this.line.length > 0 && !this.opts.pty) {
      const text = Buffer.from(this.line).toString("utf8");
      this.line = [];
      const result = this.runLine(text);
      if (typeof result === "number") {
        this.finish(result);
        return;
      }
    }
    this.finish(this.shell.status);
  }

  /** Records and runs one line; its exit status when the line ended the shell. */
  private runLine(text: string): number | undefined {
    if (text.trim() !== "") recordInput(this.ctx.session, text, this.opts.service);
    const result = this.shell.run(text);
    this.print(result.out);
    return result.exit ?? (this.opts.command.trim() !== "" ? result.code : undefined);
  }

  private print(out: Chunk[]): void {
    if (!this.decoder) {
      const text = textOf(out);
      if (text) this.io.write(this.opts.pty ? text.replace(/\r?\n/g, "\r\n") : text);
      return;
    }
    for (const chunk of out) {
      if (!chunk.text) continue;
      // A terminal merges stderr into stdout; without one they stay apart.
      const fd = this.opts.pty ? SHELL_STDOUT : chunk.fd === 2 ? SHELL_STDERR : SHELL_STDOUT;
      this.io.write(this.frame(fd, Buffer.from(this.opts.pty ? chunk.text.replace(/\r?\n/g, "\r\n") : chunk.text, "utf8")));
    }
  }

  private frame(id: number, data: Buffer): Uint8Array {
    return this.decoder ? shellPacket(id, data) : data;
  }

  private finish(code: number | undefined): void {
    if (this.done) return;
    this.done = true;
    if (this.decoder) this.io.write(shellPacket(SHELL_EXIT, Buffer.of((code ?? 0) & 0xff)));
    this.io.close();
  }
}
