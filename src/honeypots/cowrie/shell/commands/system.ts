/** Commands that describe the machine and the user: what bots run first to size up a box. */
import { BOOT_UPTIME_S, CPU_COUNT, CPU_MODEL, DIRECTORIES, KERNEL, MEMORY } from "../host.ts";
import type { Command, Shell } from "../shell.ts";
import { flags } from "./flags.ts";

const STARTED = Date.now();

const UNAME_FIELDS: Array<[string, string, (hostname: string) => string]> = [
  ["s", "kernel-name", () => KERNEL.name],
  ["n", "nodename", (hostname) => hostname],
  ["r", "kernel-release", () => KERNEL.release],
  ["v", "kernel-version", () => KERNEL.version],
  ["m", "machine", () => KERNEL.machine],
  ["p", "processor", () => "unknown"],
  ["i", "hardware-platform", () => "unknown"],
  ["o", "operating-system", () => KERNEL.os],
];

const uname: Command = (shell, args) => {
  const { short, long, operands } = flags(args);
  const bad = [...short].find((c) => !"asnrvmpio".includes(c));
  if (bad || operands.length > 0) {
    const what = bad ? `invalid option -- '${bad}'` : `extra operand '${operands[0]}'`;
    return { stderr: `uname: ${what}\nTry 'uname --help' for more information.\n`, status: 1 };
  }
  const all = short.has("a") || long.has("all");
  const picked = UNAME_FIELDS.filter(([c, name]) => (all ? c !== "p" && c !== "i" : short.has(c) || long.has(name)));
  const fields = picked.length > 0 ? picked : UNAME_FIELDS.slice(0, 1);
  return { stdout: `${fields.map(([, , value]) => value(shell.hostname)).join(" ")}\n` };
};

function groups(shell: Shell): string {
  if (shell.uid === 0) return "uid=0(root) gid=0(root) groups=0(root)";
  const u = shell.username;
  return `uid=1000(${u}) gid=1000(${u}) groups=1000(${u}),24(cdrom),25(floppy),29(audio),30(dip),44(video),46(plugdev),100(users),106(netdev)`;
}

function clock(date: Date): string {
  return date.toISOString().slice(11, 19);
}

export function uptimeSeconds(shell: Shell): number {
  return BOOT_UPTIME_S + Math.floor((shell.now().getTime() - STARTED) / 1000);
}

function uptimeLine(shell: Shell): string {
  const up = uptimeSeconds(shell);
  const days = Math.floor(up / 86400);
  const hours = Math.floor((up % 86400) / 3600);
  const minutes = String(Math.floor((up % 3600) / 60)).padStart(2, "0");
  return ` ${clock(shell.now())} up ${days} days, ${String(hours).padStart(2)}:${minutes},  1 user,  load average: 0.00, 0.02, 0.00\n`;
}

/** procps' human units: one decimal below 10, binary prefixes. */
function human(kib: number): string {
  if (kib === 0) return "0B";
  const units = ["Ki", "Mi", "Gi", "Ti"];
  let value = kib;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)}${units[unit]}`;
}

const free: Command = (_shell, args) => {
  const { short, long } = flags(args);
  const scale = (kib: number) =>
    short.has("h") || long.has("human")
      ? human(kib)
      : short.has("g")
        ? String(Math.floor(kib / 1048576))
        : short.has("m")
          ? String(Math.floor(kib / 1024))
          : short.has("b")
            ? String(kib * 1024)
            : String(kib);
  const row = (label: string, values: number[]) => `${label.padEnd(8)}${values.map((v) => scale(v).padStart(12)).join("")}\n`;
  const header = `${"".padEnd(8)}${["total", "used", "free", "shared", "buff/cache", "available"].map((h) => h.padStart(12)).join("")}\n`;
  const m = MEMORY;
  return { stdout: header + row("Mem:", [m.total, m.used, m.free, m.shared, m.buffCache, m.available]) + row("Swap:", [0, 0, 0]) };
};

const w: Command = (shell) => {
  const login = clock(shell.startedAt).slice(0, 5);
  return {
    stdout:
      uptimeLine(shell) +
      "USER     TTY      FROM             LOGIN@   IDLE   JCPU   PCPU WHAT\n" +
      `${shell.username.padEnd(9)}pts/0    ${shell.remoteIp.padEnd(17)}${login}    0.00s  0.01s  0.00s w\n`,
  };
};

const lscpu: Command = () => ({
  stdout: [
    "Architecture:            x86_64",
    "  CPU op-mode(s):        32-bit, 64-bit",
    "  Address sizes:         46 bits physical, 48 bits virtual",
    "  Byte Order:            Little Endian",
    `CPU(s):                  ${CPU_COUNT}`,
    `  On-line CPU(s) list:   0-${CPU_COUNT - 1}`,
    "Vendor ID:               GenuineIntel",
    `  Model name:            ${CPU_MODEL}`,
    "    CPU family:          6",
    "    Model:               79",
    "    Thread(s) per core:  1",
    "    Core(s) per socket:  1",
    `    Socket(s):           ${CPU_COUNT}`,
    "    BogoMIPS:            4799.99",
    "Virtualization features: ",
    "  Hypervisor vendor:     KVM",
    "  Virtualization type:   full",
    "",
  ].join("\n"),
});

const DF_ROWS: Array<[string, number, number, string]> = [
  ["udev", 997172, 0, "/dev"],
  ["tmpfs", 201496, 548, "/run"],
  ["/dev/vda1", 20466256, 2201864, "/"],
  ["tmpfs", 1007476, 0, "/dev/shm"],
  ["tmpfs", 5120, 0, "/run/lock"],
  ["tmpfs", 201492, 0, "/run/user/0"],
];

const df: Command = (_shell, args) => {
  const h = flags(args).short.has("h");
  const size = (kib: number) => (h ? human(kib).replace(/i$/, "").replace(/^0B$/, "0") : String(kib));
  const lines = [h ? "Filesystem      Size  Used Avail Use% Mounted on" : "Filesystem     1K-blocks    Used Available Use% Mounted on"];
  for (const [fs, total, used, mount] of DF_ROWS) {
    const use = `${Math.ceil((used / total) * 100)}%`;
    const cols = h ? [size(total).padStart(5), size(used).padStart(5), size(total - used).padStart(5)] : [size(total).padStart(9), size(used).padStart(7), size(total - used).padStart(9)];
    lines.push(`${h ? fs.padEnd(15) : `${fs.padEnd(14)} `}${cols.join(" ")} ${use.padStart(4)} ${mount}`);
  }
  return { stdout: `${lines.join("\n")}\n` };
};

const top: Command = (shell, _args, io) => {
  if (!io.toTerminal) return { stderr: "top: failed tty get\n", status: 1 };
  const m = MEMORY;
  return {
    stdout:
      `top - ${uptimeLine(shell).trimStart()}` +
      "Tasks:  96 total,   1 running,  95 sleeping,   0 stopped,   0 zombie\n" +
      "%Cpu(s):  0.0 us,  0.0 sy,  0.0 ni,100.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\n" +
      `MiB Mem :  ${(m.total / 1024).toFixed(1)} total,  ${(m.free / 1024).toFixed(1)} free,   ${(m.used / 1024).toFixed(1)} used,   ${(m.buffCache / 1024).toFixed(1)} buff/cache\n` +
      `MiB Swap:      0.0 total,      0.0 free,      0.0 used.   ${(m.available / 1024).toFixed(1)} avail Mem\n`,
  };
};

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export function dateText(d: Date, format = "%a %b %e %H:%M:%S %Z %Y"): string {
  const two = (n: number) => String(n).padStart(2, "0");
  const codes: Record<string, string> = {
    // A valid date's day (0-6) and month (0-11) index the tables; toISOString below throws on an invalid one.
    a: DAYS[d.getUTCDay()]!,
    b: MONTHS[d.getUTCMonth()]!,
    d: two(d.getUTCDate()),
    e: String(d.getUTCDate()).padStart(2),
    H: two(d.getUTCHours()),
    M: two(d.getUTCMinutes()),
    S: two(d.getUTCSeconds()),
    Y: String(d.getUTCFullYear()),
    m: two(d.getUTCMonth() + 1),
    s: String(Math.floor(d.getTime() / 1000)),
    Z: "UTC",
    F: d.toISOString().slice(0, 10),
    T: d.toISOString().slice(11, 19),
    "%": "%",
  };
  return format.replace(/%(.)/g, (all, c: string) => codes[c] ?? all);
}

const date: Command = (shell, args) => {
  const format = args.find((a) => a.startsWith("+"));
  return { stdout: `${dateText(shell.now(), format?.slice(1))}\n` };
};

const which: Command = (_shell, args) => {
  const found = flags(args).operands.flatMap((name) =>
    ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin"].filter((dir) => DIRECTORIES[dir]?.includes(name)).slice(0, 1).map((dir) => `${dir}/${name}`),
  );
  return { stdout: found.map((p) => `${p}\n`).join(""), status: found.length === flags(args).operands.length && found.length > 0 ? 0 : 1 };
};

const exportCommand: Command = (shell, args) => {
  if (args.length === 0 || args[0] === "-p") {
    return { stdout: [...shell.env].map(([k, v]) => `declare -x ${k}="${v}"\n`).join("") };
  }
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq > 0) shell.env.set(arg.slice(0, eq), arg.slice(eq + 1));
  }
  return {};
};

/** bash 5.2's builtins, in the order `enable` lists them; the POSIX special ones are what `enable -s` shows. */
const BUILTINS = [".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait"];
const SPECIAL_BUILTINS = new Set([".", ":", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set", "shift", "source", "times", "trap", "unset"]);
const ENABLE_USAGE = "enable: usage: enable [-a] [-dnps] [-f filename] [name ...]\n";
const ENABLE_HELP = `enable: enable [-a] [-dnps] [-f filename] [name ...]
    Enable and disable shell builtins.
    
    Enables and disables builtin shell commands.  Disabling allows you to
    execute a disk command which has the same name as a shell builtin
    without using a full pathname.
    
    Options:
      -a\tprint a list of builtins showing whether or not each is enabled
      -n\tdisable each NAME or display a list of disabled builtins
      -p\tprint the list of builtins in a reusable format
      -s\tprint only the names of Posix \`special' builtins
    
    Options controlling dynamic loading:
      -f\tLoad builtin NAME from shared object FILENAME
      -d\tRemove a builtin loaded with -f
    
    Without options, each NAME is enabled.
    
    To use the \`test' found in $PATH instead of the shell builtin
    version, type \`enable -n test'.
    
    Exit Status:
    Returns success unless NAME is not a shell builtin or an error occurs.
`;

/**
 * bash's `enable`, which bots that expect a router's CLI type first. Nothing is ever disabled
 * here: `enable -n NAME` succeeds but later lists still show NAME enabled.
 */
const enable: Command = (shell, args) => {
  const fail = (message: string) => `${shell.errorPrefix}enable: ${message}\n`;
  const options = new Set<string>();
  let library: string | undefined;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      i++;
      break;
    }
    if (arg === "--help") return { stdout: ENABLE_HELP, status: 2 };
    if (!arg.startsWith("-") || arg === "-") break;
    for (let j = 1; j < arg.length; j++) {
      const letter = arg.charAt(j);
      if (letter === "f") {
        library = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
        if (library === undefined) return { stderr: fail("-f: option requires an argument") + ENABLE_USAGE, status: 2 };
        break;
      }
      if (!"adnps".includes(letter)) return { stderr: fail(`-${letter}: invalid option`) + ENABLE_USAGE, status: 2 };
      options.add(letter);
    }
  }
  const names = args.slice(i);
  // No shared object can be loaded: the box has none that are builtins.
  if (library !== undefined) return { stderr: fail(`cannot open shared object ${library}: ${library}: cannot open shared object file: No such file or directory`), status: 1 };
  if (names.length === 0) {
    // -n lists the disabled builtins, and none are.
    if (options.has("n") && !options.has("a")) return {};
    const listed = options.has("s") ? BUILTINS.filter((b) => SPECIAL_BUILTINS.has(b)) : BUILTINS;
    return { stdout: listed.map((b) => `enable ${b}\n`).join("") };
  }
  let stderr = "";
  for (const name of names) {
    if (!BUILTINS.includes(name)) stderr += fail(`${name}: not a shell builtin`);
    else if (options.has("d")) stderr += fail(`${name}: not dynamically loaded`);
  }
  return { stderr, status: stderr ? 1 : 0 };
};

const exit: Command = (shell, args) => {
  shell.exited = true;
  const code = Number.parseInt(args[0] ?? "", 10);
  return { status: Number.isFinite(code) ? code & 255 : shell.status };
};

const logout: Command = (shell, args) => {
  if (!shell.interactive) return { stderr: `${shell.errorPrefix}logout: not login shell: use \`exit'\n`, status: 1 };
  return exit(shell, args, { stdin: "", toTerminal: false });
};

/** `sh -c '...'`, `bash script` and `echo cmd | sh` all run through the same fake shell. */
const subshell: Command = (shell, args, io) => {
  const c = args.indexOf("-c");
  if (c !== -1) return shell.child().execute(args[c + 1] ?? "", io.toTerminal);
  const script = args.find((a) => !a.startsWith("-"));
  if (script) {
    const text = shell.fs.read(shell.resolve(script));
    if (text === null) return { stderr: `bash: ${script}: No such file or directory\n`, status: 127 };
    return shell.child().execute(text, io.toTerminal);
  }
  return io.stdin ? shell.child().execute(io.stdin, io.toTerminal) : {};
};

/** `sudo x`, `nohup x`, `timeout 5 x`: the wrapped command runs as given. */
function wrapper(skipArgs: (args: string[]) => number): Command {
  return (shell, args, io) => {
    const at = skipArgs(args);
    return at < 0 || at >= args.length ? {} : shell.invoke(args.slice(at), io);
  };
}

const passwd: Command = (shell) => ({
  stderr: shell.uid === 0 ? "passwd: Authentication token manipulation error\npasswd: password unchanged\n" : "passwd: You may not view or modify password information for root.\n",
  status: 10,
});

const crontab: Command = (shell, args) => (args.includes("-l") ? { stderr: `no crontab for ${shell.username}\n`, status: 1 } : {});

const silent: Command = () => ({});

export const SYSTEM_COMMANDS: Record<string, Command> = {
  uname,
  whoami: (shell) => ({ stdout: `${shell.username}\n` }),
  id: (shell) => ({ stdout: `${groups(shell)}\n` }),
  hostname: (shell, args) => (args.length === 0 ? { stdout: `${shell.hostname}\n` } : {}),
  free,
  uptime: (shell) => ({ stdout: uptimeLine(shell) }),
  w,
  nproc: () => ({ stdout: `${CPU_COUNT}\n` }),
  lscpu,
  df,
  top,
  date,
  which,
  enable,
  export: exportCommand,
  unset: (shell, args) => {
    for (const name of args) shell.env.delete(name);
    return {};
  },
  env: (shell) => ({ stdout: [...shell.env].map(([k, v]) => `${k}=${v}\n`).join("") }),
  history: (shell) => ({ stdout: shell.history.map((line, i) => `${String(i + 1).padStart(5)}  ${line}\n`).join("") }),
  exit,
  logout,
  sh: subshell,
  bash: subshell,
  dash: subshell,
  sudo: wrapper((args) => args.findIndex((a) => !a.startsWith("-"))),
  nohup: wrapper(() => 0),
  timeout: wrapper((args) => {
    const duration = args.findIndex((a) => !a.startsWith("-"));
    return duration < 0 ? -1 : duration + 1;
  }),
  passwd,
  chpasswd: silent,
  crontab,
  true: silent,
  false: () => ({ status: 1 }),
  sleep: (_shell, args) => (args.length === 0 ? { stderr: "sleep: missing operand\nTry 'sleep --help' for more information.\n", status: 1 } : {}),
  kill: silent,
  pkill: silent,
  killall: silent,
  ulimit: silent,
  sync: silent,
  set: silent,
  alias: silent,
  unalias: silent,
  systemctl: silent,
  service: silent,
  iptables: silent,
  chmod: silent,
  chown: silent,
  chgrp: silent,
  chattr: silent,
  ":": silent,
};
