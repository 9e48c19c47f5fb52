/**
 * Download tools. The session really fetches what they ask for (from the node's network,
 * bounded, into the pot's outbox: docs/artifacts.md) and the tools print what the real ones
 * print; the fetched bytes also land in the fake filesystem, so `ls` and `cat` see them. A shell
 * without downloads (or a refused address) answers as a box whose outbound traffic is blocked.
 * Every URL is an effect the session turns into cowrie.session.file_download(.failed).
 */
import type { Command, CommandResult, FetchRequest, FetchResult, Shell } from "../shell.ts";
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

/** The value of a short option (`-O file` or `-Ofile`), or undefined. */
function option(args: string[], letter: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === `-${letter}`) return args[i + 1];
    if (arg.startsWith(`-${letter}`) && arg.length > 2 && !arg.startsWith("--")) return arg.slice(2);
  }
  return undefined;
}

/** The session's fetch of `t`, or null while it is pending (the line runs again once it is done). */
function fetchFor(shell: Shell, t: Target, tool: FetchRequest["tool"]): FetchResult | null {
  return shell.fetch({ url: t.url, tool });
}

/** Records the download and saves what came into the fake filesystem. */
function record(shell: Shell, t: Target, result: FetchResult, destfile?: string): void {
  if (result.ok === false && result.error === "disabled") {
    shell.effect({ kind: "file_download", url: t.url });
    return;
  }
  const path = destfile && destfile !== "-" ? shell.resolve(destfile) : undefined;
  if (result.ok && path) {
    // The fake disk is small: a file too big for it is there, empty, as a cut-off copy would be.
    if (shell.fs.write(path, result.text, false)) shell.fs.write(path, "", false);
  }
  shell.effect({ kind: "file_download", url: t.url, result, ...(path ? { destfile: path } : {}) });
}

function baseName(url: string): string {
  try {
    const name = new URL(url).pathname.split("/").pop();
    return name ? decodeURIComponent(name) : "index.html";
  } catch {
    return "index.html";
  }
}

/** wget's sizes: 1234, 1.2K, 10M. */
function human(n: number): string {
  if (n < 1024) return String(n);
  const units = ["K", "M", "G"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)}${units[u]}`;
}

function rate(bytes: number, ms: number): string {
  const perSecond = bytes / Math.max(ms, 1) * 1000;
  return perSecond >= 1024 * 1024 ? `${(perSecond / 1024 / 1024).toFixed(1)} MB/s` : `${(perSecond / 1024).toFixed(1)} KB/s`;
}

function connecting(t: Target, address: string | undefined): string {
  return t.isIp ? `Connecting to ${t.host}:${t.port}... ` : `Resolving ${t.host} (${t.host})... ${address ?? ""}\nConnecting to ${t.host} (${t.host})|${address}|:${t.port}... `;
}

const wget: Command = (shell, args) => {
  const urls = operands(args, "OoPaeUTtwi");
  if (urls.length === 0) {
    return { stderr: "wget: missing URL\nUsage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n", status: 1 };
  }
  const output = option(args, "O");
  const prefix = option(args, "P");
  let stderr = "";
  let stdout = "";
  let status = 0;
  for (const raw of urls) {
    const t = target(raw);
    if (!t) {
      stderr += `${raw}: Invalid URL ${raw}: Unsupported scheme\n`;
      status = 1;
      continue;
    }
    const result = fetchFor(shell, t, "wget");
    if (!result) continue;
    const name = output ?? (prefix ? `${prefix}/${baseName(t.url)}` : baseName(t.url));
    record(shell, t, result, name);
    const now = dateText(shell.now(), "%F %T");
    stderr += `--${now}--  ${t.url}\n`;
    if (!result.ok) {
      status = result.error === "http" ? 8 : result.error === "full" ? 3 : 4;
      if (result.error === "full") {
        stderr += `${connecting(t, t.host)}connected.\nHTTP request sent, awaiting response... 200 OK\nSaving to: ‘${name}’\n\nCannot write to ‘${name}’ (No space left on device).\n`;
      }
      else if (result.error === "resolve" || (result.error === "disabled" && !t.isIp)) {
        stderr += `Resolving ${t.host} (${t.host})... failed: Temporary failure in name resolution.\nwget: unable to resolve host address ‘${t.host}’\n`;
      } else if (result.error === "http") {
        stderr += `${connecting(t, result.address)}connected.\nHTTP request sent, awaiting response... ${result.status} ${result.statusText}\n${now} ERROR ${result.status}: ${result.statusText}.\n\n`;
      } else if (result.error === "timeout") {
        stderr += `${connecting(t, result.address)}failed: Connection timed out.\n`;
      } else stderr += `${connecting(t, result.address)}failed: Connection refused.\n`;
      continue;
    }
    const shown = name === "-" ? "STDOUT" : name;
    const length = result.length === null ? "unspecified" : `${result.length}${result.length >= 1024 ? ` (${human(result.length)})` : ""}`;
    stderr += `${connecting(t, result.address)}connected.\nHTTP request sent, awaiting response... ${result.status} ${result.statusText}\n`;
    stderr += `Length: ${length}${result.contentType ? ` [${result.contentType.split(";")[0]}]` : ""}\nSaving to: ‘${shown}’\n\n`;
    const total = result.length ?? result.size;
    const percent = total > 0 ? Math.min(100, Math.floor((result.size / total) * 100)) : 100;
    const bar = `${"=".repeat(Math.max(0, Math.round(percent * 0.38) - 1))}>`.padEnd(38);
    stderr += `${shown.padEnd(20).slice(0, 20)}${String(percent).padStart(4)}%[${bar}]  ${human(result.size).padStart(6)}  --.-KB/s    in ${(result.ms / 1000).toFixed(result.ms < 100 ? 0 : 1)}s\n\n`;
    if (result.truncated) {
      status = 4;
      stderr += `${now} (${rate(result.size, result.ms)}) - Read error at byte ${result.size}${result.length !== null ? `/${result.length}` : ""} (Connection reset by peer). Giving up.\n\n`;
    } else stderr += `${now} (${rate(result.size, result.ms)}) - ‘${shown}’ saved [${result.size}${result.length !== null ? `/${result.length}` : ""}]\n\n`;
    if (name === "-") stdout += result.text;
  }
  return { stdout, stderr: args.includes("-q") ? "" : stderr, status };
};

const curlProgress = (size: number, ms: number) => {
  const speed = String(Math.round((size / Math.max(ms, 1)) * 1000));
  return (
    "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n" +
    "                                 Dload  Upload   Total   Spent    Left  Speed\n" +
    `100 ${String(size).padStart(5)}  100 ${String(size).padStart(5)}    0     0  ${speed.padStart(5)}      0 --:--:-- --:--:-- --:--:-- ${speed.padStart(5)}\n`
  );
};

const curl: Command = (shell, args) => {
  const urls = operands(args, "odHuXAeTrwFmCxbcKEUYyz");
  if (urls.length === 0) return { stderr: "curl: try 'curl --help' or 'curl --manual' for more information\n", status: 2 };
  const silent = args.some((a) => /^-[a-zA-Z]*s/.test(a)) && !args.some((a) => /^-[a-zA-Z]*S/.test(a));
  const fail = args.some((a) => a === "--fail" || /^-[a-zA-Z]*f/.test(a));
  const remoteName = args.some((a) => a === "-O" || a === "--remote-name" || /^-[a-zA-Z]*O/.test(a));
  const output = option(args, "o");
  let stderr = "";
  let stdout = "";
  let status = 0;
  for (const raw of urls) {
    const t = target(raw);
    if (!t) {
      stderr += `curl: (3) URL using bad/illegal format or missing URL\n`;
      status = 3;
      continue;
    }
    const result = fetchFor(shell, t, "curl");
    if (!result) continue;
    const dest = output ?? (remoteName ? baseName(t.url) : undefined);
    record(shell, t, result, dest);
    if (!result.ok) {
      if (result.error === "http") {
        if (fail) {
          status = 22;
          stderr += `curl: (22) The requested URL returned error: ${result.status}\n`;
        }
        continue;
      }
      if (result.error === "full") {
        status = 23;
        stderr += "curl: (23) Failure writing output to destination\n";
        continue;
      }
      const resolveFailed = result.error === "resolve" || (result.error === "disabled" && !t.isIp);
      status = resolveFailed ? 6 : result.error === "timeout" ? 28 : 7;
      stderr += resolveFailed
        ? `curl: (6) Could not resolve host: ${t.host}\n`
        : result.error === "timeout"
          ? `curl: (28) Failed to connect to ${t.host} port ${t.port} after 30000 ms: Timeout was reached\n`
          : `curl: (7) Failed to connect to ${t.host} port ${t.port} after 0 ms: Couldn't connect to server\n`;
      continue;
    }
    if (dest) stderr += curlProgress(result.size, result.ms);
    else stdout += result.text;
    if (result.truncated) {
      status = 18;
      stderr += `curl: (18) transfer closed with ${Math.max(0, (result.length ?? result.size + 1) - result.size)} bytes remaining to read\n`;
    }
  }
  return { stdout, stderr: silent ? "" : stderr, status };
};

/** busybox tftp -g -r FILE [-l LOCAL] HOST [PORT] */
const tftp: Command = (shell, args) => {
  const remote = option(args, "r");
  const host = operands(args, "rl")[0];
  if (!host || !remote) return { stderr: "BusyBox v1.35.0 (Debian 1:1.35.0-4+b3) multi-call binary.\n\nUsage: tftp [OPTIONS] HOST [PORT]\n", status: 1 };
  const port = operands(args, "rl")[1];
  const t = target(`tftp://${host}${port ? `:${port}` : ""}/${remote}`);
  if (!t) return { stderr: `tftp: bad address '${host}'\n`, status: 1 };
  const result = fetchFor(shell, t, "tftp");
  if (!result) return {};
  record(shell, t, result, option(args, "l") ?? remote.split("/").pop());
  if (result.ok) return result.truncated ? { stderr: "tftp: write error: No space left on device\n", status: 1 } : {};
  return { stderr: result.error === "http" ? `tftp: ${result.message.replace(/^server error: /, "server error: (1) ")}\n` : "tftp: timeout\n", status: 1 };
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

/** busybox ftpget [-u USER -p PASS -P PORT] HOST LOCAL_FILE REMOTE_FILE */
const ftpget: Command = (shell, args) => {
  const [host, local, remote] = operands(args, "upP");
  if (!host || !local) return { stderr: "BusyBox v1.35.0 (Debian 1:1.35.0-4+b3) multi-call binary.\n\nUsage: ftpget [OPTIONS] HOST [LOCAL_FILE] REMOTE_FILE\n", status: 1 };
  const file = remote ?? local;
  const port = option(args, "P");
  const t = target(`ftp://${host}${port ? `:${port}` : ""}/${file.replace(/^\//, "")}`);
  if (!t) return { stderr: `ftpget: bad address '${host}'\n`, status: 1 };
  const result = fetchFor(shell, t, "ftpget");
  if (!result) return {};
  record(shell, t, result, local);
  if (result.ok) return {};
  const failed: CommandResult = { status: 1 };
  if (result.error === "http") failed.stderr = `ftpget: unexpected server response to ${/^5\d\d/.test(result.message) ? "RETR" : "USER"}: ${result.message}\n`;
  else failed.stderr = `ftpget: can't connect to remote host (${t.host}): ${result.error === "timeout" ? "Connection timed out" : "Connection refused"}\n`;
  return failed;
};

const BUSYBOX_APPLETS = ["cat", "cp", "echo", "ls", "mkdir", "mv", "rm", "wget", "tftp", "ftpget", "uname", "ps", "sh", "chmod", "kill", "id", "whoami", "hostname", "free", "head", "tail", "grep", "wc", "awk", "cut", "sleep", "touch", "ln"];

const busybox: Command = (shell, args, io) => {
  const [applet, ...rest] = args;
  if (!applet || applet === "--help") {
    return {
      stdout: `BusyBox v1.35.0 (Debian 1:1.35.0-4+b3) multi-call binary.\nBusyBox is copyrighted by many authors between 1998-2015.\nLicensed under GPLv2. See source distribution for detailed\ncopyright notices.\n\nUsage: busybox [function [arguments]...]\n   or: busybox --list[-full]\n   or: function [arguments]...\n\nCurrently defined functions:\n\t${BUSYBOX_APPLETS.join(", ")}\n`,
    };
  }
  if (applet === "--list") return { stdout: BUSYBOX_APPLETS.map((a) => `${a}\n`).join("") };
  if (!BUSYBOX_APPLETS.includes(applet)) return { stderr: `${applet}: applet not found\n`, status: 127 };
  if (applet === "tftp") return tftp(shell, rest, io);
  if (applet === "ftpget") return ftpget(shell, rest, io);
  return shell.invoke([applet, ...rest], io);
};

export const NETWORK_COMMANDS: Record<string, Command> = { wget, curl, busybox, scp };
