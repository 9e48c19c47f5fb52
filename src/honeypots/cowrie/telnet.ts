/**
 * The Telnet side: the login prompt of a Debian box running telnetd, then the same fake shell as
 * SSH. The server offers to echo (WILL ECHO, WILL SGA) as telnetd does; until the client agrees,
 * it echoes nothing, so a line-mode client or a bot's raw socket does not see its input twice.
 */
import type { Socket } from "node:net";
import { CowrieSession, type SessionOptions } from "./session.ts";
import { Shell } from "./shell/shell.ts";
import { DO, DONT, escapeIac, IAC, OPT_ECHO, OPT_SGA, TelnetDecoder, WILL, WONT, type Negotiation } from "./telnet-codec.ts";
import { runShell, Terminal } from "./terminal.ts";
import { TtyRecorder } from "./ttylog.ts";
import { allows } from "./userdb.ts";

export function telnetConnection(socket: Socket, opts: SessionOptions): void {
  const session = CowrieSession.accepted(socket, "telnet", opts);
  /** Records the shell once the login succeeded. */
  let recorder: TtyRecorder | null = null;
  // The recording's end comes before the session's, as in Cowrie.
  socket.once("close", () => {
    recorder?.close();
    session.close();
  });

  const send = (data: string | Uint8Array) => {
    recorder?.output(data);
    if (!socket.destroyed) socket.write(escapeIac(typeof data === "string" ? Buffer.from(data) : data));
  };
  const terminal = new Terminal({ stream: socket, write: send, end: () => socket.end() }, opts.limits, false);
  const decoder = new TelnetDecoder();
  const answered = new Set<string>();
  let clientEchoes = true;
  let hidden = false;

  const negotiate = ({ verb, option }: Negotiation) => {
    if (option === OPT_ECHO && (verb === DO || verb === DONT)) {
      clientEchoes = verb === DONT;
      terminal.editor.echo = !clientEchoes && !hidden;
      return;
    }
    if (option === OPT_SGA && verb === DO) return;
    // Refuse everything else once per option and verb; answering every repeat could loop forever.
    const key = `${verb}:${option}`;
    if (answered.has(key) || (verb !== DO && verb !== WILL)) return;
    answered.add(key);
    socket.write(Uint8Array.of(IAC, verb === DO ? WONT : DONT, option));
  };

  socket.on("data", (chunk: Buffer) => {
    const { data, negotiations } = decoder.decode(chunk);
    negotiations.forEach(negotiate);
    if (data.length > 0) {
      recorder?.input(data);
      terminal.feed(data);
    }
  });

  const loginPrompt = `${opts.hostname} login: `;
  // login(1)'s LOGIN_TIMEOUT.
  const timer = setTimeout(() => {
    send(`\r\nLogin timed out after ${Math.round(opts.loginTimeoutMs / 1000)} seconds.\r\n`);
    socket.end();
  }, opts.loginTimeoutMs);
  socket.once("close", () => clearTimeout(timer));

  let failures = 0;
  let username: string | null = null;
  const setHidden = (value: boolean) => {
    hidden = value;
    terminal.editor.echo = !clientEchoes && !hidden;
  };
  terminal.handler = (event) => {
    if (event.type !== "line") return;
    if (username === null) {
      if (event.text.trim() === "") {
        send(loginPrompt);
        return;
      }
      username = event.text.trim();
      setHidden(true);
      send("Password: ");
      return;
    }
    const user = username;
    const password = event.text;
    username = null;
    setHidden(false);
    if (!clientEchoes) send("\r\n");
    const ok = allows(opts.userdb, user, password);
    session.login(user, password, ok);
    if (!ok) {
      if (++failures >= opts.maxAuthTries) {
        send("\r\nLogin incorrect\r\n");
        socket.end();
        return;
      }
      send(`\r\nLogin incorrect\r\n${loginPrompt}`);
      return;
    }
    clearTimeout(timer);
    if (opts.ttylog) recorder = new TtyRecorder(opts.ttylog, session, { width: 80, height: 24 }, null);
    runShell(terminal, new Shell({ hostname: opts.hostname, username: user, interactive: true, tty: true, remoteIp: session.endpoint.src_ip, downloads: opts.fetcher !== undefined }), session, { interactive: true });
  };

  socket.write(Uint8Array.of(IAC, WILL, OPT_ECHO, IAC, WILL, OPT_SGA));
  send(`Debian GNU/Linux 12\r\n${loginPrompt}`);
}
