/**
 * The commands the fake shell answers, as toybox and Android's own tools (getprop, pm) print
 * them for the `shell` user. Anything else is "inaccessible or not found" (mksh's words).
 */
import { KERNEL, PACKAGES } from "./device.ts";
import { FakeFs, type FsNode } from "./filesystem.ts";
import { type AndroidShell, type ShellResult, stderr, stdout } from "./shell.ts";

export interface CommandContext {
  shell: AndroidShell;
  argv: string[];
  /** The previous stage's stdout in a pipeline, null when reading the terminal. */
  stdin: string | null;
  depth: number;
}

type Command = (ctx: CommandContext) => ShellResult;

/** Flags (`-la`) and operands apart; `--` ends the flags. */
function split(args: string[]): { flags: Set<string>; operands: string[] } {
  const flags = new Set<string>();
  const operands: string[] = [];
  let done = false;
  for (const arg of args) {
    if (!done && arg === "--") done = true;
    else if (!done && /^-[A-Za-z0-9]+$/.test(arg)) for (const f of arg.slice(1)) flags.add(f);
    else operands.push(arg);
  }
  return { flags, operands };
}

const PERMS = ["---", "--x", "-w-", "-wx", "r--", "r-x", "rw-", "rwx"];
const NAMES: Record<number, string> = { 0: "root", 1000: "system", 1023: "media_rw", 2000: "shell", 2001: "cache", 9997: "everybody" };

function permString(node: FsNode): string {
  const type = node.kind === "dir" ? "d" : node.kind === "link" ? "l" : "-";
  return type + [6, 3, 0].map((shift) => PERMS[(node.perm >> shift) & 7]).join("");
}

function date(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
}

function longLine(name: string, node: FsNode): string {
  const owner = NAMES[node.uid] ?? String(node.uid);
  const group = NAMES[node.gid] ?? String(node.gid);
  const target = node.kind === "link" ? ` -> ${node.target}` : "";
  return `${permString(node)} ${node.kind === "dir" ? 2 : 1} ${owner.padEnd(6)} ${group.padEnd(6)} ${String(node.size).padStart(7)} ${date(node.mtime)} ${name}${target}\n`;
}

function ls({ shell, argv }: CommandContext): ShellResult {
  const { flags, operands } = split(argv.slice(1));
  const paths = operands.length ? operands : ["."];
  let out = "";
  let errors = "";
  for (const operand of paths) {
    const path = FakeFs.resolve(shell.cwd, operand);
    const node = shell.fs.lookup(path, !flags.has("l"));
    if (!node) {
      errors += `ls: ${operand}: No such file or directory\n`;
      continue;
    }
    if (node.kind !== "dir" || flags.has("d")) {
      out += flags.has("l") ? longLine(operand, node) : `${operand}\n`;
      continue;
    }
    const listing = shell.fs.list(path);
    if ("error" in listing) {
      errors += `ls: ${operand}: Permission denied\n`;
      continue;
    }
    if (paths.length > 1) out += `${operand}:\n`;
    const entries = listing.entries.filter(([name]) => flags.has("a") || !name.startsWith("."));
    if (flags.has("l")) out += `total ${entries.length * 8}\n${entries.map(([name, n]) => longLine(name, n)).join("")}`;
    else out += entries.map(([name]) => `${name}\n`).join("");
  }
  return { out: [...(out ? [{ fd: 1 as const, text: out }] : []), ...(errors ? [{ fd: 2 as const, text: errors }] : [])], code: errors ? 1 : 0 };
}

function cat({ shell, argv, stdin }: CommandContext): ShellResult {
  const files = argv.slice(1).filter((a) => a !== "-");
  if (files.length === 0) return stdout(stdin ?? "");
  let out = "";
  for (const file of files) {
    const node = shell.fs.lookup(FakeFs.resolve(shell.cwd, file));
    if (!node) return { out: [{ fd: 1, text: out }, { fd: 2, text: `cat: ${file}: No such file or directory\n` }], code: 1 };
    if (node.kind === "dir") return { out: [{ fd: 1, text: out }, { fd: 2, text: `cat: ${file}: Is a directory\n` }], code: 1 };
    if (!node.readable) return { out: [{ fd: 1, text: out }, { fd: 2, text: `cat: ${file}: Permission denied\n` }], code: 1 };
    out += node.text ?? "";
  }
  return stdout(out);
}

function getprop({ shell, argv }: CommandContext): ShellResult {
  const name = argv[1];
  if (name !== undefined) return stdout(`${shell.props.get(name) ?? argv[2] ?? ""}\n`);
  return stdout([...shell.props].map(([k, v]) => `[${k}]: [${v}]\n`).join(""));
}

function uname({ argv }: CommandContext): ShellResult {
  const { flags } = split(argv.slice(1));
  const all = flags.has("a");
  const fields: [string, string][] = [
    ["s", KERNEL.sysname],
    ["n", KERNEL.nodename],
    ["r", KERNEL.release],
    ["v", KERNEL.version],
    ["m", KERNEL.machine],
    ["o", "Toybox"],
  ];
  const picked = fields.filter(([f]) => all || flags.has(f)).map(([, v]) => v);
  return stdout(`${picked.length ? picked.join(" ") : KERNEL.sysname}\n`);
}

const ID = "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid),3012(readtracefs) context=u:r:shell:s0";

function cd({ shell, argv }: CommandContext): ShellResult {
  const target = argv[1] ?? "/";
  const path = FakeFs.resolve(shell.cwd, target);
  const node = shell.fs.lookup(path);
  if (!node) return stderr(`/system/bin/sh: cd: ${target}: No such file or directory\n`, 2);
  if (node.kind !== "dir") return stderr(`/system/bin/sh: cd: ${target}: Not a directory\n`, 2);
  shell.cwd = path;
  return stdout("");
}

function echo({ argv }: CommandContext): ShellResult {
  let args = argv.slice(1);
  let newline = true;
  while (args[0] === "-n" || args[0] === "-e" || args[0] === "-ne" || args[0] === "-en") {
    if (args[0].includes("n")) newline = false;
    args = args.slice(1);
  }
  return stdout(args.join(" ") + (newline ? "\n" : ""));
}

function pm({ argv }: CommandContext): ShellResult {
  if (argv[1] === "list" && (argv[2] === "packages" || argv[2] === "package")) {
    const { flags, operands } = split(argv.slice(3));
    const filter = operands[0] ?? "";
    const shown = PACKAGES.filter((p) => p.includes(filter));
    return stdout(shown.map((p) => (flags.has("f") ? `package:/data/app/${p}-1/base.apk=${p}\n` : `package:${p}\n`)).join(""));
  }
  if (argv[1] === "path" && argv[2]) return PACKAGES.includes(argv[2]) ? stdout(`package:/data/app/${argv[2]}-1/base.apk\n`) : stdout("", 1);
  if (argv[1] === "install") return stderr("Failure [INSTALL_FAILED_INVALID_URI]\n");
  if (argv[1] === "uninstall") return stderr("Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
  return stderr(`Unknown command: ${argv[1] ?? ""}\n`, 255);
}

function chmod({ shell, argv }: CommandContext): ShellResult {
  const { operands } = split(argv.slice(1));
  const [mode, ...files] = operands;
  if (!mode || files.length === 0) return stderr("chmod: Need 2 arguments (see \"chmod --help\")\n");
  for (const file of files) {
    const node = shell.fs.lookup(FakeFs.resolve(shell.cwd, file));
    if (!node) return stderr(`chmod: ${file}: No such file or directory\n`);
    if (!node.writable) return stderr(`chmod: ${file}: Operation not permitted\n`);
    if (/^[0-7]{1,4}$/.test(mode)) node.perm = Number.parseInt(mode, 8);
    else if (/x/.test(mode) && !/-/.test(mode)) node.perm |= 0o111;
  }
  return stdout("");
}

function rm({ shell, argv }: CommandContext): ShellResult {
  const { flags, operands } = split(argv.slice(1));
  for (const file of operands) {
    const why = shell.fs.remove(FakeFs.resolve(shell.cwd, file));
    if (why && !(flags.has("f") && why === "No such file or directory")) return stderr(`rm: ${file}: ${why}\n`);
  }
  return stdout("");
}

function mkdir({ shell, argv }: CommandContext): ShellResult {
  const { flags, operands } = split(argv.slice(1));
  for (const dir of operands) {
    const why = shell.fs.mkdir(FakeFs.resolve(shell.cwd, dir));
    if (why && !(flags.has("p") && why === "File exists")) return stderr(`mkdir: ${dir}: ${why}\n`);
  }
  return stdout("");
}

function touch({ shell, argv }: CommandContext): ShellResult {
  for (const file of split(argv.slice(1)).operands) {
    const path = FakeFs.resolve(shell.cwd, file);
    if (shell.fs.lookup(path)) continue;
    const why = shell.fs.put(path, 0o666, 0, Math.floor(Date.now() / 1000), new Uint8Array(0));
    if (why) return stderr(`touch: ${file}: ${why.replace(/^couldn't create file: /, "")}\n`);
  }
  return stdout("");
}

function lines(text: string): string[] {
  return text.split("\n").slice(0, text.endsWith("\n") ? -1 : undefined);
}

/** grep by plain substring: a pattern from an attacker never becomes a RegExp. */
function grep({ shell, argv, stdin }: CommandContext): ShellResult {
  const { flags, operands } = split(argv.slice(1));
  const [pattern, file] = operands;
  if (pattern === undefined) return stderr("usage: grep [-EFHIab...] PATTERN [FILE...]\n", 2);
  let text = stdin ?? "";
  if (file) {
    const node = shell.fs.lookup(FakeFs.resolve(shell.cwd, file));
    if (!node || node.kind === "dir") return stderr(`grep: ${file}: No such file or directory\n`, 2);
    text = node.text ?? "";
  }
  const needle = flags.has("i") ? pattern.toLowerCase() : pattern;
  const hits = lines(text).filter((l) => (flags.has("i") ? l.toLowerCase() : l).includes(needle) !== flags.has("v"));
  if (flags.has("c")) return stdout(`${hits.length}\n`, hits.length ? 0 : 1);
  return stdout(hits.map((l) => `${l}\n`).join(""), hits.length ? 0 : 1);
}

function headTail(ctx: CommandContext, tail: boolean): ShellResult {
  const n = Number(/^-n?(\d+)$/.exec(ctx.argv[1] ?? "")?.[1] ?? (ctx.argv[1] === "-n" ? ctx.argv[2] : 10)) || 10;
  const all = lines(ctx.stdin ?? "");
  return stdout((tail ? all.slice(-n) : all.slice(0, n)).map((l) => `${l}\n`).join(""));
}

const PS = `USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME
shell        12034   758 10830928  3692 __do_sys_+          0 S sh
shell        12051 12034 10869584  3920 0                   0 R ps
`;

function sh(ctx: CommandContext): ShellResult {
  const { argv, shell, stdin, depth } = ctx;
  if (argv[1] === "-c" && argv[2] !== undefined) return shell.run(argv[2], depth + 1);
  if (argv[1] && !argv[1].startsWith("-")) {
    const node = shell.fs.lookup(FakeFs.resolve(shell.cwd, argv[1]));
    if (!node) return stderr(`/system/bin/sh: ${argv[1]}: No such file or directory\n`, 127);
    return stdout("");
  }
  if (stdin !== null) return shell.run(stdin.replace(/\n/g, ";"), depth + 1);
  return stdout("");
}

/** `cmd SERVICE ...`: the package service is pm's; others are not there for the shell user. */
function cmd(ctx: CommandContext): ShellResult {
  const service = ctx.argv[1];
  if (service === "package") return pm({ ...ctx, argv: ["pm", ...ctx.argv.slice(2)] });
  if (service === undefined || service === "-l") return stdout("Currently running services:\n  activity\n  package\n  settings\n  window\n");
  return stderr(`cmd: Can't find service: ${service}\n`, 20);
}

export const COMMANDS: Record<string, Command> = {
  cat,
  cmd,
  cd,
  chmod,
  echo,
  getprop,
  grep,
  ls,
  mkdir,
  pm,
  rm,
  sh,
  touch,
  uname,
  head: (ctx) => headTail(ctx, false),
  tail: (ctx) => headTail(ctx, true),
  wc: ({ stdin }) => stdout(`${lines(stdin ?? "").length}\n`),
  id: () => stdout(`${ID}\n`),
  whoami: () => stdout("shell\n"),
  pwd: ({ shell }) => stdout(`${shell.cwd}\n`),
  true: () => stdout(""),
  false: () => stdout("", 1),
  sleep: () => stdout(""),
  exit: ({ argv, shell }) => {
    const code = argv[1] === undefined ? shell.status : Number.parseInt(argv[1], 10) & 0xff || 0;
    return { out: [], code, exit: code };
  },
  ps: () => stdout(PS),
  setprop: ({ argv }) => stderr(`Failed to set property '${argv[1] ?? ""}' to '${argv[2] ?? ""}'.\nSee dmesg for error reason.\n`),
  settings: ({ argv }) => (argv[1] === "get" ? stdout("null\n") : stdout("")),
  am: ({ argv }) => (argv[1] === "start" ? stdout(`Starting: Intent { ${argv.slice(2).join(" ")} }\n`) : stdout("")),
  input: () => stdout(""),
  kill: ({ argv }) => stderr(`/system/bin/sh: kill: ${argv[1] ?? ""}: Operation not permitted\n`),
  reboot: () => stderr("reboot: Operation not permitted\n", 255),
  su: () => stderr("/system/bin/sh: su: inaccessible or not found\n", 127),
  remount: () => stderr('Not running as root. Try "adb root" first.\n'),
  df: () =>
    stdout(
      "Filesystem       1K-blocks     Used Available Use% Mounted on\n/dev/block/dm-5    9165928  2960488   6189056  33% /\n/dev/block/dm-41 112298840 21187120  91111720  19% /data\n/dev/fuse        112298840 21187120  91111720  19% /storage/emulated\n",
    ),
};
