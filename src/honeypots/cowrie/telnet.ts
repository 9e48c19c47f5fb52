/**
 * The Telnet side: the login prompt of a Debian box running telnetd, then the same fake shell as
 * SSH. Like Debian's telnetd it first asks for the client's terminal type, speed, X display and
 * environment (DO TTYPE, TSPEED, XDISPLOC, NEW-ENVIRON) and waits for the answers: those four
 * requests alone are how scanners (nmap -sV: "Linux telnetd") tell a Linux telnetd. Then it
 * offers to echo (WILL ECHO, WILL SGA); until the client agrees, it echoes nothing, so a
 * line-mode client or a bot's raw socket does not see its input twice.
 */
import type { Socket } from "node:net";
import { CowrieSession, type SessionOptions } from "./session.ts";
import { Shell } from "./shell/shell.ts";
import {
  DO,
  DONT,
  escapeIac,
  IAC,
  OPT_ECHO,
  OPT_NEW_ENVIRON,
  OPT_SGA,
  OPT_TSPEED,
  OPT_TTYPE,
  OPT_XDISPLOC,
  TelnetDecoder,
  WILL,
  WONT,
  type Negotiation,
} from "./telnet-codec.ts";
import { runShell, Terminal } from "./terminal.ts";
import { TtyRecorder } from "./ttylog.ts";
import { allows } from "./userdb.ts";

/** What telnetd asks for first, in its order. */
const ASKED = [OPT_TTYPE, OPT_TSPEED, OPT_XDISPLOC, OPT_NEW_ENVIRON];
/**
 * telnetd waits for the answers for as long as the client takes; the pot shows its login prompt
 * after this long without them (or at the client's first data), so that a bot's raw socket that
 * waits for "login:" is still let in and recorded.
 */
const ANSWER_WAIT_MS = 1000;

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

  /** The options asked for first that the client has not answered yet. */
  const unanswered = new Set(ASKED);
  const negotiate = ({ verb, option }: Negotiation) => {
    if (unanswered.has(option) && (verb === WILL || verb === WONT)) {
      // An answer to telnetd's own request: agreed or refused, nothing to say back.
      unanswered.delete(option);
      if (unanswered.size === 0) greet();
      return;
    }
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
      // Typed ahead of the prompt: login reads it as the user name, as after telnetd's wait.
      greet();
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

  let greeted = false;
  function greet(): void {
    if (greeted) return;
    greeted = true;
    clearTimeout(wait);
    if (socket.destroyed) return;
    socket.write(Uint8Array.of(IAC, WILL, OPT_ECHO, IAC, WILL, OPT_SGA));
    send(`Debian GNU/Linux 12\r\n${loginPrompt}`);
  }
  const wait = setTimeout(greet, ANSWER_WAIT_MS);
  socket.once("close", () => clearTimeout(wait));
  socket.write(Uint8Array.from(ASKED.flatMap((option) => [IAC, DO, option])));
}
