/**
 * The SSH side: a real SSH-2 server (ssh2) that looks like Debian 12's OpenSSH, takes password and
 * keyboard-interactive logins against the userdb, and gives a successful login the fake shell, for
 * interactive sessions (with or without a pty) and for exec requests alike.
 */
import { createHash } from "node:crypto";
import type { Socket } from "node:net";
import { Server, type Algorithms, type AuthContext, type Connection, type ServerChannel, type Session } from "ssh2";
import { KexInitReader, type KexInit } from "./kexinit.ts";
import { CowrieSession, type SessionOptions } from "./session.ts";
import { Shell } from "./shell/shell.ts";
import { runShell, Terminal } from "./terminal.ts";
import { TtyRecorder } from "./ttylog.ts";
import { serveScpSink, scpSinkTarget } from "./upload/scp.ts";
import { serveSftp } from "./upload/sftp.ts";
import { allows } from "./userdb.ts";

export interface SshOptions extends SessionOptions {
  hostKeys: string[];
  /** Full identification line, e.g. "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3". */
  version: string;
}

/**
 * OpenSSH 9.2's server offer, minus what ssh2 lacks (sntrup761, chacha20-poly1305, umac), in
 * OpenSSH's order, so the negotiated algorithms are those a real Debian server would pick.
 */
const ALGORITHMS: Algorithms = {
  kex: [
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
    "ecdh-sha2-nistp521",
    "diffie-hellman-group-exchange-sha256",
    "diffie-hellman-group16-sha512",
    "diffie-hellman-group18-sha512",
    "diffie-hellman-group14-sha256",
  ],
  serverHostKey: ["rsa-sha2-512", "rsa-sha2-256", "ecdsa-sha2-nistp256", "ssh-ed25519"],
  cipher: ["aes128-ctr", "aes192-ctr", "aes256-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"],
  hmac: ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com", "hmac-sha1-etm@openssh.com", "hmac-sha2-256", "hmac-sha2-512", "hmac-sha1"],
  compress: ["none", "zlib@openssh.com"],
};

const METHODS: Array<"publickey" | "password" | "keyboard-interactive"> = ["publickey", "password", "keyboard-interactive"];
/** sshd's MaxSessions: channels per connection. */
const MAX_CHANNELS = 10;
/** Env requests recorded per channel; the rest are accepted silently. */
const MAX_ENV_EVENTS = 32;
const BARE_SHELL = /^\s*(?:\/(?:usr\/)?bin\/)?(?:ba|da)?sh\s*$/;

export interface SshServer {
  accept(socket: Socket): void;
}

/** A connection between its accept and its SSH handshake. */
interface Handshake {
  session: CowrieSession;
  grace: ReturnType<typeof setTimeout>;
  /** cowrie.client.version is out: the client's offer may follow it. */
  identified: boolean;
  /** The client's offer, read before ssh2 reported the client (both come from the same bytes). */
  kex: KexInit | null;
}

export function createSshServer(opts: SshOptions): SshServer {
  /**
   * Connections waiting for ssh2 to read the client's identification, by remote address and port:
   * ssh2 reports a new client with its address but not its socket.
   */
  const pending = new Map<string, Handshake>();
  const server = new Server({ hostKeys: opts.hostKeys, ident: opts.version.replace(/^SSH-2\.0-/, ""), algorithms: ALGORITHMS }, (client, info) => {
    const key = `${info.ip}:${info.port}`;
    const waiting = pending.get(key);
    pending.delete(key);
    if (!waiting) {
      client.end();
      return;
    }
    const { session, grace } = waiting;
    client.once("ready", () => clearTimeout(grace));
    const raw = info.header.identRaw;
    session.emit("cowrie.client.version", { version: raw }, `Remote SSH version: ${raw}`);
    // Cowrie's order: the version, then the offer, whichever of the two was read first here.
    waiting.identified = true;
    if (waiting.kex) emitKex(session, waiting.kex);
    handleClient(client, session, opts);
  });
  server.on("error", (err: Error) => opts.logger.warn({ err: err.message }, "ssh server error"));

  return {
    accept(socket) {
      const session = CowrieSession.accepted(socket, "ssh", opts);
      const key = `${socket.remoteAddress}:${socket.remotePort}`;
      // sshd's LoginGraceTime: an unauthenticated connection is dropped after this long.
      const grace = setTimeout(() => socket.destroy(), opts.loginTimeoutMs);
      const handshake: Handshake = { session, grace, identified: false, kex: null };
      pending.set(key, handshake);
      socket.once("close", () => {
        clearTimeout(grace);
        pending.delete(key);
        session.close();
      });
      server.injectSocket(socket);
      tapKexInit(socket, (kex) => {
        if (handshake.identified) emitKex(session, kex);
        else handshake.kex = kex;
      });
    },
  };
}

/**
 * Reads the client's KEXINIT from a copy of its first bytes. ssh2 reads the socket through
 * 'data' events too, so a second listener sees the same chunks and takes nothing from it; it is
 * added after injectSocket, whose pause() then keeps the socket paused until ssh2 resumes it.
 */
function tapKexInit(socket: Socket, onKex: (kex: KexInit) => void): void {
  const reader = new KexInitReader();
  const onData = (chunk: Buffer) => {
    let kex: KexInit | null = null;
    let over = true;
    try {
      kex = reader.feed(chunk);
      over = reader.done;
    } catch {}
    if (!over) return;
    socket.off("data", onData);
    if (kex) onKex(kex);
  };
  socket.on("data", onData);
}

function emitKex(session: CowrieSession, kex: KexInit): void {
  session.emit("cowrie.client.kex", { ...kex }, `SSH client hassh fingerprint: ${kex.hassh}`);
}

function md5Fingerprint(key: Buffer): string {
  return (createHash("md5").update(key).digest("hex").match(/../g) ?? []).join(":");
}

function handleClient(client: Connection, session: CowrieSession, opts: SshOptions): void {
  let failures = 0;
  let username = "";
  client.on("error", () => {});

  const decide = (ctx: AuthContext, password: string) => {
    const ok = allows(opts.userdb, ctx.username, password);
    session.login(ctx.username, password, ok);
    if (ok) {
      username = ctx.username;
      ctx.accept();
    } else refuse(ctx);
  };
  const refuse = (ctx: AuthContext) => {
    // sshd's MaxAuthTries: after that many failures the connection is closed.
    if (++failures >= opts.maxAuthTries) {
      ctx.reject();
      client.end();
    } else ctx.reject(METHODS);
  };

  client.on("authentication", (ctx) => {
    if (ctx.method === "password") decide(ctx, ctx.password);
    else if (ctx.method === "keyboard-interactive") {
      ctx.prompt([{ prompt: "Password: ", echo: false }], (answers) => decide(ctx, answers[0] ?? ""));
    } else if (ctx.method === "publickey") {
      if (!ctx.signature) {
        const fingerprint = md5Fingerprint(ctx.key.data);
        session.emit(
          "cowrie.client.fingerprint",
          { username: ctx.username, fingerprint, key: ctx.key.data.toString("base64"), type: ctx.key.algo },
          `public key attempt for user ${ctx.username} of type ${ctx.key.algo} with fingerprint ${fingerprint}`,
        );
      }
      refuse(ctx);
    } else ctx.reject(METHODS);
  });

  client.on("ready", () => {
    let channels = 0;
    client.on("session", (accept, reject) => {
      if (++channels > MAX_CHANNELS) {
        reject();
        return;
      }
      handleSessionChannel(accept(), username, session, opts);
    });
  });
  // Port forwarding would make the honeypot a proxy for the attacker's traffic.
  client.on("tcpip", (_accept, reject) => reject());
  client.on("request", (_accept, reject) => reject?.());
}

function handleSessionChannel(channel: Session, username: string, session: CowrieSession, opts: SshOptions): void {
  let pty = false;
  let size = { width: 80, height: 24 };
  let term: string | null = null;
  let envEvents = 0;
  const newShell = (interactive: boolean) =>
    new Shell({ hostname: opts.hostname, username, interactive, tty: pty, remoteIp: session.endpoint.src_ip, downloads: opts.fetcher !== undefined });

  channel.on("pty", (accept, _reject, info) => {
    pty = true;
    size = { width: info.cols || 80, height: info.rows || 24 };
    term = info.term || null;
    session.emit("cowrie.client.size", { width: info.cols, height: info.rows }, `Terminal Size: ${info.cols} ${info.rows}`);
    accept?.();
  });
  channel.on("window-change", (accept) => accept?.());
  channel.on("env", (accept, _reject, info) => {
    if (envEvents++ < MAX_ENV_EVENTS) session.emit("cowrie.client.var", { name: info.key, value: info.val }, `request_env: ${info.key}=${info.val}`);
    accept?.();
  });
  channel.on("shell", (accept) => {
    const stream = accept();
    const recorder = opts.ttylog ? new TtyRecorder(opts.ttylog, session, size, term) : null;
    startTerminal(stream, newShell(pty), session, opts, pty, recorder);
  });
  channel.on("exec", (accept, _reject, info) => {
    const stream = accept();
    // OpenSSH's scp without SFTP (`scp -O`, older clients) runs `scp -t TARGET` to receive files.
    const scpTarget = opts.outbox ? scpSinkTarget(info.command) : null;
    if (scpTarget !== null && opts.outbox) {
      session.emit("cowrie.command.input", { input: info.command }, `CMD: ${info.command}`);
      serveScpSink(stream, scpTarget, { hostname: opts.hostname, username, outbox: opts.outbox, maxBytes: opts.downloadMaxBytes ?? 0, session });
      return;
    }
    if (BARE_SHELL.test(info.command)) {
      session.emit("cowrie.command.input", { input: info.command }, `CMD: ${info.command}`);
      startTerminal(stream, newShell(false), session, opts, false);
      return;
    }
    const shell = newShell(false);
    void Promise.resolve(session.command(shell, info.command)).then((result) => {
      // With a pty both streams are the terminal; without one, stderr is the channel's own stream.
      if (pty) stream.write(result.output.replace(/\r?\n/g, "\r\n"));
      else {
        stream.write(result.stdout);
        stream.stderr.write(result.stderr);
      }
      stream.exit(result.status);
      stream.end();
    });
  });
  // SFTP (and OpenSSH 9's scp, which speaks it) reaches a view of the fake filesystem whose uploads are captured.
  channel.on("sftp", (accept, reject) => {
    if (!opts.outbox) return reject?.();
    serveSftp(accept(), { hostname: opts.hostname, username, outbox: opts.outbox, maxBytes: opts.downloadMaxBytes ?? 0, session });
  });
  channel.on("subsystem", (_accept, reject) => reject?.());
  channel.on("x11", (_accept, reject) => reject?.());
  channel.on("auth-agent", (_accept, reject) => reject?.());
  channel.on("signal", (accept) => accept?.());
}

function startTerminal(stream: ServerChannel, shell: Shell, session: CowrieSession, opts: SshOptions, interactive: boolean, recorder: TtyRecorder | null = null): void {
  const terminal = new Terminal(
    {
      stream,
      write: (data) => {
        recorder?.output(data);
        stream.write(data);
      },
      writeError: (text) => {
        recorder?.output(text);
        stream.stderr.write(text);
      },
      end: (status) => {
        stream.exit(status);
        stream.end();
        recorder?.close();
      },
    },
    opts.limits,
    interactive,
  );
  stream.on("data", (chunk: Buffer) => {
    recorder?.input(chunk);
    terminal.feed(chunk);
  });
  stream.on("error", () => {});
  stream.on("close", () => recorder?.close());
  // A client that closes its side (end of piped stdin) ends the shell as bash's EOF does.
  stream.on("end", () => terminal.endInput());
  runShell(terminal, shell, session, { interactive });
}
