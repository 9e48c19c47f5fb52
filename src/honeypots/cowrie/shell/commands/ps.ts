/**
 * `ps` as procps-ng 4.0 on Debian 12 prints it. Bots tell the two option syntaxes apart by their
 * headers: BSD `ps aux` has USER ... %CPU %MEM VSZ RSS ... STAT START, UNIX `ps -ef` has UID ...
 * PPID C STIME, so each gets its own columns over the same process table.
 */
import { MEMORY } from "../host.ts";
import type { Command, Shell } from "../shell.ts";
import { dateText, uptimeSeconds } from "./system.ts";

interface Process {
  pid: number;
  ppid: number;
  user: string;
  /** KiB, as VSZ and RSS are shown. */
  vsz: number;
  rss: number;
  tty: string;
  stat: string;
  /** CPU seconds used so far. */
  cpu: number;
  /** Started at boot, at this session's login, or just now (ps itself). */
  started: "boot" | "login" | "now";
  command: string;
}

/** What a small Debian 12 VPS runs from boot (of the kernel threads, only kthreadd is listed). */
const SYSTEM: Process[] = [
  { pid: 1, ppid: 0, user: "root", vsz: 167740, rss: 12156, tty: "?", stat: "Ss", cpu: 9, started: "boot", command: "/sbin/init" },
  { pid: 2, ppid: 0, user: "root", vsz: 0, rss: 0, tty: "?", stat: "S", cpu: 0, started: "boot", command: "[kthreadd]" },
  { pid: 312, ppid: 1, user: "root", vsz: 49244, rss: 15364, tty: "?", stat: "Ss", cpu: 21, started: "boot", command: "/lib/systemd/systemd-journald" },
  { pid: 341, ppid: 1, user: "root", vsz: 26040, rss: 6812, tty: "?", stat: "Ss", cpu: 1, started: "boot", command: "/lib/systemd/systemd-udevd" },
  { pid: 498, ppid: 1, user: "root", vsz: 6608, rss: 2684, tty: "?", stat: "Ss", cpu: 2, started: "boot", command: "/usr/sbin/cron -f" },
  {
    pid: 502,
    ppid: 1,
    user: "messagebus",
    vsz: 9116,
    rss: 4780,
    tty: "?",
    stat: "Ss",
    cpu: 0,
    started: "boot",
    command: "/usr/bin/dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only",
  },
  { pid: 511, ppid: 1, user: "root", vsz: 17292, rss: 7964, tty: "?", stat: "Ss", cpu: 1, started: "boot", command: "/lib/systemd/systemd-logind" },
  { pid: 604, ppid: 1, user: "root", vsz: 15432, rss: 9136, tty: "?", stat: "Ss", cpu: 0, started: "boot", command: "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups" },
  { pid: 611, ppid: 1, user: "root", vsz: 5940, rss: 1104, tty: "tty1", stat: "Ss+", cpu: 0, started: "boot", command: "/sbin/agetty -o -p -- \\u --noclear - linux" },
];

/** The boot processes, then this session: its sshd, the login bash, and the ps being run. */
function processes(shell: Shell, args: string[]): Process[] {
  const bash = shell.pid;
  // sshd keeps a privileged root process beside the user's own one, unless the user is root.
  const privileged: Process[] =
    shell.uid === 0 ? [] : [{ pid: bash - 5, ppid: 604, user: "root", vsz: 17900, rss: 10880, tty: "?", stat: "Ss", cpu: 0, started: "login", command: `sshd: ${shell.username} [priv]` }];
  return [
    ...SYSTEM,
    ...privileged,
    { pid: bash - 3, ppid: privileged[0]?.pid ?? 604, user: shell.username, vsz: 17900, rss: 6520, tty: "?", stat: shell.uid === 0 ? "Ss" : "S", cpu: 0, started: "login", command: `sshd: ${shell.username}@pts/0` },
    { pid: bash, ppid: bash - 3, user: shell.username, vsz: 7968, rss: 4620, tty: "pts/0", stat: "Ss", cpu: 0, started: "login", command: "-bash" },
    { pid: bash + 7, ppid: bash, user: shell.username, vsz: 11084, rss: 4460, tty: "pts/0", stat: "R+", cpu: 0, started: "now", command: ["ps", ...args].join(" ") },
  ];
}

/** procps' start time: the clock for today, the day for this year, else the year. */
function startText(shell: Shell, p: Process): string {
  const now = shell.now();
  const at = p.started === "now" ? now : p.started === "login" ? shell.startedAt : new Date(now.getTime() - uptimeSeconds(shell) * 1000);
  if (at.getUTCFullYear() !== now.getUTCFullYear()) return String(at.getUTCFullYear());
  return dateText(at, "%F") === dateText(now, "%F") ? dateText(at, "%H:%M") : dateText(at, "%b%d");
}

/** User names longer than the column are cut with a "+", as procps does. */
const user = (name: string) => (name.length > 8 ? `${name.slice(0, 7)}+` : name).padEnd(8);
const two = (n: number) => String(n).padStart(2, "0");
const bsdTime = (s: number) => `${Math.floor(s / 60)}:${two(s % 60)}`;
const unixTime = (s: number) => `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`;
/** procps rounds %MEM down to a tenth of a percent of MemTotal. */
const memPercent = (rss: number) => (Math.floor((rss * 1000) / MEMORY.total) / 10).toFixed(1);

function bsdLine(shell: Shell, p: Process, userFormat: boolean): string {
  const time = bsdTime(p.cpu).padStart(6);
  if (!userFormat) return `${String(p.pid).padStart(7)} ${p.tty.padEnd(8)} ${p.stat.padEnd(4)} ${time} ${p.command}`;
  const sizes = `${String(p.vsz).padStart(6)} ${String(p.rss).padStart(5)}`;
  return `${user(p.user)} ${String(p.pid).padStart(7)}  0.0 ${memPercent(p.rss).padStart(4)} ${sizes} ${p.tty.padEnd(8)} ${p.stat.padEnd(4)} ${startText(shell, p).padStart(5)} ${time} ${p.command}`;
}

function unixLine(shell: Shell, p: Process): string {
  return `${user(p.user)} ${String(p.pid).padStart(7)} ${String(p.ppid).padStart(7)}  0 ${startText(shell, p).padEnd(5)} ${p.tty.padEnd(8)} ${unixTime(p.cpu)} ${p.command}`;
}

/** procps reads `ps -aux` as `ps aux`. */
const DASHED_AUX = /^-(?=[aux]*[ax])[ax]*u[ax]*$/;

/**
 * BSD options are letters without a dash; once a UNIX option is given, bare words are its values
 * (`-u root`). GNU long options (`--sort=-%mem`) go with either and change no column here.
 */
function bsdLetters(args: string[]): string | null {
  const short = args.filter((a) => !a.startsWith("--"));
  if (short.some((a) => a.startsWith("-") && !DASHED_AUX.test(a))) return null;
  const letters = short.map((a) => a.replace(/^-/, "")).join("");
  return /^[a-zA-Z]+$/.test(letters) ? letters : null;
}

const ps: Command = (shell, args, io) => {
  const all = processes(shell, args);
  const bsd = bsdLetters(args);
  let lines: string[];
  // On a terminal procps cuts lines at its width; `w` widens to 132 columns and `ww` lifts the limit.
  let width = io.toTerminal ? 80 : Number.POSITIVE_INFINITY;
  if (bsd !== null) {
    const userFormat = bsd.includes("u");
    // `a` lifts "only mine", `x` lifts "only with a terminal".
    const shown = all.filter((p) => (bsd.includes("a") || p.user === shell.username) && (bsd.includes("x") || p.tty !== "?"));
    const header = userFormat ? "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND" : "    PID TTY      STAT   TIME COMMAND";
    lines = [header, ...shown.map((p) => bsdLine(shell, p, userFormat))];
    if (/w.*w/.test(bsd)) width = Number.POSITIVE_INFINITY;
    else if (bsd.includes("w") && io.toTerminal) width = 132;
  } else if (args.some((a) => /^-[a-zA-Z]*[aefAx]/.test(a))) {
    lines = ["UID          PID    PPID  C STIME TTY          TIME CMD", ...all.map((p) => unixLine(shell, p))];
  } else {
    const own = all.filter((p) => p.pid >= shell.pid);
    lines = ["    PID TTY          TIME CMD", ...own.map((p) => `${String(p.pid).padStart(7)} ${p.tty.padEnd(8)} ${unixTime(p.cpu)} ${p.pid === shell.pid ? "bash" : "ps"}`)];
  }
  return { stdout: lines.map((l) => `${l.slice(0, width)}\n`).join("") };
};

export const PROCESS_COMMANDS: Record<string, Command> = { ps };
