/**
 * The machine the fake shell pretends to be: a small Debian 12 VPS, consistent with the SSH banner
 * (OpenSSH_9.2p1 Debian-2+deb12u3) and the Telnet issue line, so that `uname`, /etc/os-release,
 * /proc and `free` tell the same story.
 */

export const KERNEL = {
  name: "Linux",
  release: "6.1.0-26-amd64",
  version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1 (2024-09-30)",
  machine: "x86_64",
  os: "GNU/Linux",
};

export const CPU_MODEL = "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz";
export const CPU_COUNT = 2;

/** KiB, as /proc/meminfo and `free` count them. */
export const MEMORY = { total: 2014956, used: 312344, free: 1211488, shared: 1072, buffCache: 491124, available: 1702612 };

/** When the box was installed: the date on system files in `ls -l`. */
export const INSTALL_DATE = new Date("2024-10-07T09:41:00Z");

/** Seconds the box has been up when the honeypot starts. */
export const BOOT_UPTIME_S = 3_456_789;

export function unameAll(hostname: string): string {
  return `${KERNEL.name} ${hostname} ${KERNEL.release} ${KERNEL.version} ${KERNEL.machine} ${KERNEL.os}`;
}

function cpuinfo(): string {
  const one = (n: number) =>
    [
      `processor\t: ${n}`,
      "vendor_id\t: GenuineIntel",
      "cpu family\t: 6",
      "model\t\t: 79",
      `model name\t: ${CPU_MODEL}`,
      "stepping\t: 1",
      "microcode\t: 0xb000040",
      "cpu MHz\t\t: 2399.998",
      "cache size\t: 35840 KB",
      `physical id\t: ${n}`,
      "siblings\t: 1",
      "core id\t\t: 0",
      "cpu cores\t: 1",
      `apicid\t\t: ${n}`,
      `initial apicid\t: ${n}`,
      "fpu\t\t: yes",
      "fpu_exception\t: yes",
      "cpuid level\t: 13",
      "wp\t\t: yes",
      "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch cpuid_fault invpcid_single pti ssbd ibrs ibpb stibp fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm rdseed adx smap xsaveopt arat md_clear arch_capabilities",
      "bugs\t\t: cpu_meltdown spectre_v1 spectre_v2 spec_store_bypass l1tf mds swapgs taa itlb_multihit mmio_stale_data retbleed gds",
      "bogomips\t: 4799.99",
      "clflush size\t: 64",
      "cache_alignment\t: 64",
      "address sizes\t: 46 bits physical, 48 bits virtual",
      "power management:",
      "",
    ].join("\n");
  return `${Array.from({ length: CPU_COUNT }, (_, n) => one(n)).join("\n")}\n`;
}

function meminfo(): string {
  const rows: Array<[string, number]> = [
    ["MemTotal", MEMORY.total],
    ["MemFree", MEMORY.free],
    ["MemAvailable", MEMORY.available],
    ["Buffers", 61248],
    ["Cached", 389512],
    ["SwapCached", 0],
    ["Active", 402188],
    ["Inactive", 226740],
    ["SwapTotal", 0],
    ["SwapFree", 0],
    ["Shmem", MEMORY.shared],
  ];
  return rows.map(([k, v]) => `${`${k}:`.padEnd(16)}${String(v).padStart(8)} kB\n`).join("");
}

const PASSWD_SYSTEM = [
  "root:x:0:0:root:/root:/bin/bash",
  "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
  "bin:x:2:2:bin:/bin:/usr/sbin/nologin",
  "sys:x:3:3:sys:/dev:/usr/sbin/nologin",
  "sync:x:4:65534:sync:/bin:/bin/sync",
  "games:x:5:60:games:/usr/games:/usr/sbin/nologin",
  "man:x:6:12:man:/var/cache/man:/usr/sbin/nologin",
  "lp:x:7:7:lp:/var/spool/lpd:/usr/sbin/nologin",
  "mail:x:8:8:mail:/var/mail:/usr/sbin/nologin",
  "news:x:9:9:news:/var/spool/news:/usr/sbin/nologin",
  "uucp:x:10:10:uucp:/var/spool/uucp:/usr/sbin/nologin",
  "proxy:x:13:13:proxy:/bin:/usr/sbin/nologin",
  "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin",
  "backup:x:34:34:backup:/var/backups:/usr/sbin/nologin",
  "list:x:38:38:Mailing List Manager:/var/list:/usr/sbin/nologin",
  "irc:x:39:39:ircd:/run/ircd:/usr/sbin/nologin",
  "_apt:x:42:65534::/nonexistent:/usr/sbin/nologin",
  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
  "systemd-network:x:998:998:systemd Network Management:/:/usr/sbin/nologin",
  "messagebus:x:100:107::/nonexistent:/usr/sbin/nologin",
  "sshd:x:101:65534::/run/sshd:/usr/sbin/nologin",
];

const ROOT_HASH = "$y$j9T$3kVt0GZ8mQbWPJx1yfBfS1$wZ3mHn6nQ8oQ1oY2aJkP0bq3Lr8uXvS6cT9dE4fG5h7";

/** The user a login lands as; any name other than root becomes uid 1000. */
export function account(username: string): { uid: number; home: string } {
  return username === "root" ? { uid: 0, home: "/root" } : { uid: 1000, home: `/home/${username}` };
}

export function systemFiles(hostname: string, username: string): Record<string, string> {
  const users = username === "root" ? PASSWD_SYSTEM : [...PASSWD_SYSTEM, `${username}:x:1000:1000:,,,:/home/${username}:/bin/bash`];
  return {
    "/etc/hostname": `${hostname}\n`,
    "/etc/hosts": `127.0.0.1\tlocalhost\n127.0.1.1\t${hostname}\n\n::1\t\tlocalhost ip6-localhost ip6-loopback\nff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n`,
    "/etc/issue": "Debian GNU/Linux 12 \\n \\l\n\n",
    "/etc/issue.net": "Debian GNU/Linux 12\n",
    "/etc/debian_version": "12.7\n",
    "/etc/os-release":
      'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL="https://www.debian.org/"\nSUPPORT_URL="https://www.debian.org/support"\nBUG_REPORT_URL="https://bugs.debian.org/"\n',
    "/etc/passwd": `${users.join("\n")}\n`,
    "/etc/shadow": `${users.map((line) => `${line.split(":")[0]}:${line.startsWith("root:") ? ROOT_HASH : "*"}:20003:0:99999:7:::`).join("\n")}\n`,
    "/etc/shells": "# /etc/shells: valid login shells\n/bin/sh\n/usr/bin/sh\n/bin/bash\n/usr/bin/bash\n/bin/rbash\n/usr/bin/rbash\n/bin/dash\n/usr/bin/dash\n",
    "/etc/resolv.conf": "nameserver 1.1.1.1\nnameserver 8.8.8.8\n",
    "/proc/cpuinfo": cpuinfo(),
    "/proc/meminfo": meminfo(),
    "/proc/version": `Linux version ${KERNEL.release} (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) ${KERNEL.version}\n`,
    "/root/.bashrc": "# ~/.bashrc: executed by bash(1) for non-login shells.\n\nexport LS_OPTIONS='--color=auto'\neval \"$(dircolors)\"\nalias ls='ls $LS_OPTIONS'\n",
    "/root/.profile": "# ~/.profile: executed by Bourne-compatible login shells.\n\nif [ \"$BASH\" ]; then\n  if [ -f ~/.bashrc ]; then\n    . ~/.bashrc\n  fi\nfi\n\nmesg n 2> /dev/null || true\n",
  };
}

/** Directory tree of the fake machine; "name@target" marks a symlink (merged /usr as on Debian 12). */
export const DIRECTORIES: Record<string, string[]> = {
  "/": ["bin@usr/bin", "boot", "dev", "etc", "home", "initrd.img@boot/initrd.img-6.1.0-26-amd64", "lib@usr/lib", "lib64@usr/lib64", "lost+found", "media", "mnt", "opt", "proc", "root", "run", "sbin@usr/sbin", "srv", "sys", "tmp", "usr", "var", "vmlinuz@boot/vmlinuz-6.1.0-26-amd64"],
  "/boot": [],
  "/dev": ["null", "zero", "random", "urandom", "tty", "shm", "pts"],
  "/dev/shm": [],
  "/dev/pts": [],
  "/etc": ["apt", "cron.d", "crontab", "debian_version", "default", "fstab", "group", "hostname", "hosts", "init.d", "issue", "issue.net", "network", "os-release", "passwd", "profile", "resolv.conf", "shadow", "shells", "ssh", "sudoers", "systemd"],
  "/home": [],
  "/lost+found": [],
  "/media": [],
  "/mnt": [],
  "/opt": [],
  "/proc": ["1", "cpuinfo", "meminfo", "mounts", "net", "self", "uptime", "version"],
  "/proc/1": [],
  "/proc/net": [],
  "/proc/self": [],
  "/root": [".bash_history", ".bashrc", ".profile", ".ssh"],
  "/root/.ssh": [],
  "/run": [],
  "/srv": [],
  "/sys": [],
  "/tmp": [],
  "/usr": ["bin", "games", "include", "lib", "lib64", "libexec", "local", "sbin", "share", "src"],
  "/usr/bin": ["apt", "awk", "base64", "bash", "busybox", "cat", "chmod", "chown", "cp", "crontab", "curl", "cut", "dash", "date", "df", "dmesg", "echo", "env", "free", "grep", "gzip", "head", "hostname", "id", "kill", "less", "ln", "lscpu", "ls", "mkdir", "mv", "nano", "nohup", "nproc", "passwd", "perl", "printf", "ps", "python3", "rm", "scp", "sed", "sh", "sleep", "sort", "ssh", "sudo", "tail", "tar", "top", "touch", "uname", "uniq", "uptime", "vi", "w", "wc", "wget", "whoami", "which"],
  "/usr/sbin": ["chpasswd", "cron", "ip", "iptables", "sshd", "useradd"],
  "/usr/local": ["bin", "lib", "sbin", "share"],
  "/var": ["backups", "cache", "lib", "local", "lock", "log", "mail", "opt", "run", "spool", "tmp"],
  "/var/tmp": [],
  "/var/log": ["apt", "auth.log", "btmp", "dpkg.log", "lastlog", "syslog", "wtmp"],
};

/** The previous login shown in the banner: about a day ago, at an unremarkable time. */
const LAST_LOGIN_AGO_MS = ((26 * 60 + 17) * 60 + 43) * 1000;

/** What Debian prints after a login: kernel line, the licence note, and the last login. */
export function motd(hostname: string, now: Date): string {
  const last = new Date(now.getTime() - LAST_LOGIN_AGO_MS);
  const stamp = last.toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+) ([\d:]+) GMT$/, (_m, day, date, month, year, time) => `${day} ${month} ${String(Number(date)).padStart(2)} ${time} ${year}`);
  return (
    `Linux ${hostname} ${KERNEL.release} ${KERNEL.version} ${KERNEL.machine}\n\n` +
    "The programs included with the Debian GNU/Linux system are free software;\n" +
    "the exact distribution terms for each program are described in the\n" +
    "individual files in /usr/share/doc/*/copyright.\n\n" +
    "Debian GNU/Linux comes with ABSOLUTELY NO WARRANTY, to the extent\n" +
    "permitted by applicable law.\n" +
    `Last login: ${stamp} from 192.168.1.23\n`
  );
}
