/**
 * Download tools. Every URL is recorded (an effect the session turns into
 * cowrie.session.file_download) and never fetched: the box answers as one whose outbound traffic
 * is blocked, so a bot's dropper fails the way it would on a firewalled VPS.
 */
import type { Command, Shell } from "../shell.ts";
import { dateText } from "./system.ts";

interface Target {
  url: string;
  host: string;
  port: number;
  isIp: boolean;
}

function target(raw: string, defaultScheme = "http"): Target | null {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `${defaultScheme}://${raw}`;
  try {
    const url = new URL(withScheme);
    if (!url.hostname) return null;
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : url.protocol === "ftp:" ? 21 : url.protocol === "tftp:" ? 69 : 80);
    return { url: withScheme, host, port, isIp: /^[\d.]+$/.test(host) || host.includes(":") };
  } catch {
    return null;
  }
}

/** Operands of a command whose options listed in `valued` take a value. */
function operands(args: string[], valued: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith("--")) continue;
    if (arg.startsWith("-") && arg.length > 1) {
      if (arg.length === 2 && valued.includes(arg.charAt(1))) i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

function record(shell: Shell, t: Target): void {
  shell.effect({ kind: "file_download", url: t.url });
}

const wget: Command = (shell, args) => {
  const urls = operands(args, "OoPaeUTtwi");
  if (urls.length === 0) {
    return { stderr: "wget: missing URL\nUsage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n", status: 1 };
  }
  let stderr = "";
  for (const raw of urls) {
    const t = target(raw);
    if (!t) {
      stderr += `${raw}: Invalid URL ${raw}: Unsupported scheme\n`;
      continue;
    }
    record(shell, t);
    stderr += `--${dateText(shell.now(), "%F %T")}--  ${t.url}\n`;
    stderr += t.isIp
      ? `Connecting to ${t.host}:${t.port}... failed: Connection refused.\n`
      : `Resolving ${t.host} (${t.host})... failed: Temporary failure in name resolution.\nwget: unable to resolve host address ‘${t.host}’\n`;
  }
  return { stderr: args.includes("-q") ? "" : stderr, status: 4 };
};

const curl: Command = (shell, args) => {
  const urls = operands(args, "odHuXAeTrwFmCxbcKEUYyz");
  if (urls.length === 0) return { stderr: "curl: try 'curl --help' or 'curl --manual' for more information\n", status: 2 };
  const silent = args.some((a) => /^-[a-zA-Z]*s/.test(a)) && !args.some((a) => /^-[a-zA-Z]*S/.test(a));
  let stderr = "";
  let status = 0;
  for (const raw of urls) {
    const t = target(raw);
    if (!t) {
      stderr += `curl: (3) URL using bad/illegal format or missing URL\n`;
      status = 3;
      continue;
    }
    record(shell, t);
    status = t.isIp ? 7 : 6;
    stderr += t.isIp ? `curl: (7) Failed to connect to ${t.host} port ${t.port} after 0 ms: Couldn't connect to server\n` : `curl: (6) Could not resolve host: ${t.host}\n`;
  }
  return { stderr: silent ? "" : stderr, status };
};

/** busybox tftp -g -r FILE HOST [PORT] */
const tftp: Command = (shell, args) => {
  const remote = args[args.indexOf("-r") + 1];
  const host = operands(args, "rl")[0];
  if (!host || !remote || args.indexOf("-r") === -1) return { stderr: "BusyBox v1.35.0 (Debian 1:1.35.0-4+b3) multi-call binary.\n\nUsage: tftp [OPTIONS] HOST [PORT]\n", status: 1 };
  const t = target(`tftp://${host}/${remote}`);
  if (t) record(shell, t);
  return { stderr: "tftp: timeout\n", status: 1 };
};

const SCP_USAGE =
  "usage: scp [-346ABCOpqRrsTv] [-c cipher] [-D sftp_server_path] [-F ssh_config]\n" +
  "           [-i identity_file] [-J destination] [-l limit] [-o ssh_option]\n" +
  "           [-P port] [-S program] [-X sftp_option] source ... target\n";
const SCP_FLAGS = "12346ABCTdfOpqRrstv";
const SCP_VALUED = "cDFiJloPSX";

/** scp's idea of a remote operand: `scp://[user@]host[:port]/path`, or `[user@]host:path` with the colon before any slash. */
function remoteOperand(operand: string, port: number): { user: string; host: string; port: number; path: string } | null {
  const uri = /^scp:\/\/(?:([^@/]*)@)?(\[[^\]/]*\]|[^:/]+)(?::(\d+))?(\/.*)?$/.exec(operand);
  if (uri) return { user: uri[1] ?? "", host: uri[2]!.replace(/^\[|\]$/g, ""), port: uri[3] ? Number(uri[3]) : port, path: uri[4] ?? "" };
  const plain = /^(?:([^/:]*)@)?(\[[^\]/]*\]|[^/:@[]+):(.*)$/s.exec(operand);
  if (!plain) return null;
  return { user: plain[1] ?? "", host: plain[2]!.replace(/^\[|\]$/g, ""), port, path: plain[3]! };
}

/**
 * OpenSSH 9.2's scp. Copies to or from another host fail the way ssh does on a box whose outbound
 * traffic is blocked, and each remote source is recorded as a download; local copies are cp's.
 * `scp -t` and `scp -f` are the far end of a transfer that an scp client starts over an exec
 * request; they answer as with nothing sent. Capturing the files a client uploads that way, or
 * over SFTP, is not done yet: the SSH server refuses the sftp subsystem.
 */
const scp: Command = (shell, args, io) => {
  const operands: string[] = [];
  const modes = new Set<string>();
  let port = 22;
  const usage = (message: string) => ({ stderr: message + SCP_USAGE, status: 1 });
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      // OpenSSH's getopt stops at the first operand.
      operands.push(...args.slice(i));
      break;
    }
    for (let j = 1; j < arg.length; j++) {
      const letter = arg.charAt(j);
      if (SCP_VALUED.includes(letter)) {
        const value = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
        if (value === undefined) return usage(`scp: option requires an argument -- ${letter}\r\n`);
        if (letter === "P") {
          const parsed = /^\d{1,5}$/.test(value) ? Number(value) : 0;
          if (parsed < 1 || parsed > 65535) return { stderr: `scp: bad port "${value}"\n\r\n`, status: 255 };
          port = parsed;
        }
        break;
      }
      if (!SCP_FLAGS.includes(letter)) return usage(`scp: unknown option -- ${letter}\r\n`);
      modes.add(letter);
    }
  }
  if (modes.has("t")) return { stdout: "\0" };
  if (modes.has("f")) return { status: 1 };
  if (operands.length < 2) return usage("");
  const remotes = operands.map((o) => remoteOperand(o, port));
  const first = remotes.find((r) => r !== null);
  if (!first) return shell.invoke(["cp", ...(modes.has("r") ? ["-r"] : []), ...operands], io);
  // Sources on another host are downloads, recorded as scp:// URLs; the last operand is the target.
  remotes.slice(0, -1).forEach((r) => {
    if (!r) return;
    const host = r.host.includes(":") ? `[${r.host}]` : r.host;
    const url = `scp://${r.user ? `${r.user}@` : ""}${host}${r.port === 22 ? "" : `:${r.port}`}/${r.path.replace(/^\//, "")}`;
    shell.effect({ kind: "file_download", url });
  });
  const connect = /^[\d.]+$/.test(first.host) || first.host.includes(":")
    ? `ssh: connect to host ${first.host} port ${first.port}: Connection refused\r\n`
    : `ssh: Could not resolve hostname ${first.host}: Temporary failure in name resolution\r\n`;
  return { stderr: `${connect}scp: Connection closed\r\n`, status: 255 };
};

const BUSYBOX_APPLETS = ["cat", "cp", "echo", "ls", "mkdir", "mv", "rm", "wget", "tftp", "uname", "ps", "sh", "chmod", "kill", "id", "whoami", "hostname", "free", "head", "tail", "grep", "wc", "awk", "cut", "sleep", "touch", "ln"];

const busybox: Command = (shell, args, io) => {
  const [applet, ...rest] = args;
  if (!applet || applet === "--help") {
    return {
      stdout: `BusyBox v1.35.0 (Debian 1:1.35.0-4+b3) multi-call binary.\nBusyBox is copyrighted by many authors between 1998-2015.\nLicensed under GPLv2. See source distribution for detailed\ncopyright notices.\n\nUsage: busybox [function [arguments]...]\n   or: busybox --list[-full]\n   or: function [arguments]...\n\nCurrently defined functions:\n\t${BUSYBOX_APPLETS.join(", ")}\n`,
    };
  }
  if (applet === "--list") return { stdout: BUSYBOX_APPLETS.map((a) => `${a}\n`).join("") };
  if (!BUSYBOX_APPLETS.includes(applet)) return { stderr: `${applet}: applet not found\n`, status: 127 };
  return applet === "tftp" ? tftp(shell, rest, io) : shell.invoke([applet, ...rest], io);
};

export const NETWORK_COMMANDS: Record<string, Command> = { wget, curl, busybox, scp };
