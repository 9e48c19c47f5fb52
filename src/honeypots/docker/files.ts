/**
 * The few files an attacker reads first in a fresh container, or through a bind of the host's
 * root (`-v /:/mnt` then `chroot /mnt`): enough to answer `cat /etc/os-release` the way the
 * image, or the Ubuntu host under it, would.
 */
import { KERNEL, KERNEL_BUILD } from "./facts.ts";

/** What a filesystem looks like: an Alpine or Debian-based image, an Ubuntu image, or the host. */
export type Flavour = "alpine" | "debian" | "ubuntu" | "host";

const DEBIAN_BASED = new Set(["debian", "nginx", "redis", "node", "python", "httpd", "mysql", "postgres", "mongo", "php", "golang", "openjdk", "ruby", "wordpress"]);

export function flavourOf(remote: string): Flavour {
  const base = remote.split("/").pop() ?? "";
  if (base === "ubuntu") return "ubuntu";
  if (DEBIAN_BASED.has(base)) return "debian";
  return "alpine";
}

const UBUNTU_OS = `PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
`;

const OS_RELEASE: Record<Flavour, string> = {
  alpine: `NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.20.3
PRETTY_NAME="Alpine Linux v3.20"
HOME_URL="https://alpinelinux.org/"
BUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"
`,
  debian: `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`,
  ubuntu: UBUNTU_OS,
  host: UBUNTU_OS,
};

const ISSUE: Record<Flavour, string> = {
  alpine: "Welcome to Alpine Linux 3.20\nKernel \\r on an \\m (\\l)\n\n",
  debian: "Debian GNU/Linux 12 \\n \\l\n\n",
  ubuntu: "Ubuntu 22.04.4 LTS \\n \\l\n\n",
  host: "Ubuntu 22.04.4 LTS \\n \\l\n\n",
};

const DEBIAN_PASSWD = `root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
bin:x:2:2:bin:/bin:/usr/sbin/nologin
sys:x:3:3:sys:/dev:/usr/sbin/nologin
sync:x:4:65534:sync:/bin:/bin/sync
games:x:5:60:games:/usr/games:/usr/sbin/nologin
man:x:6:12:man:/var/cache/man:/usr/sbin/nologin
lp:x:7:7:lp:/var/spool/lpd:/usr/sbin/nologin
mail:x:8:8:mail:/var/mail:/usr/sbin/nologin
news:x:9:9:news:/var/spool/news:/usr/sbin/nologin
uucp:x:10:10:uucp:/var/spool/uucp:/usr/sbin/nologin
proxy:x:13:13:proxy:/bin:/usr/sbin/nologin
www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin
backup:x:34:34:backup:/var/backups:/usr/sbin/nologin
list:x:38:38:Mailing List Manager:/var/list:/usr/sbin/nologin
irc:x:39:39:ircd:/run/ircd:/usr/sbin/nologin
_apt:x:42:65534::/nonexistent:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
`;

const PASSWD: Record<Flavour, string> = {
  alpine: `root:x:0:0:root:/root:/bin/sh
bin:x:1:1:bin:/bin:/sbin/nologin
daemon:x:2:2:daemon:/sbin:/sbin/nologin
lp:x:4:7:lp:/var/spool/lpd:/sbin/nologin
sync:x:5:0:sync:/sbin:/bin/sync
shutdown:x:6:0:shutdown:/sbin:/sbin/shutdown
halt:x:7:0:halt:/sbin:/sbin/halt
mail:x:8:12:mail:/var/mail:/sbin/nologin
news:x:9:13:news:/usr/lib/news:/sbin/nologin
uucp:x:10:14:uucp:/var/spool/uucppublic:/sbin/nologin
cron:x:16:16:cron:/var/spool/cron:/sbin/nologin
ftp:x:21:21::/var/lib/ftp:/sbin/nologin
sshd:x:22:22:sshd:/dev/null:/sbin/nologin
games:x:35:35:games:/usr/games:/sbin/nologin
ntp:x:123:123:NTP:/var/empty:/sbin/nologin
guest:x:405:100:guest:/dev/null:/sbin/nologin
nobody:x:65534:65534:nobody:/:/sbin/nologin
`,
  debian: DEBIAN_PASSWD,
  ubuntu: DEBIAN_PASSWD,
  host: `${DEBIAN_PASSWD}systemd-network:x:100:102:systemd Network Management,,,:/run/systemd:/usr/sbin/nologin
systemd-resolve:x:101:103:systemd Resolver,,,:/run/systemd:/usr/sbin/nologin
messagebus:x:102:105::/nonexistent:/usr/sbin/nologin
systemd-timesync:x:103:106:systemd Time Synchronization,,,:/run/systemd:/usr/sbin/nologin
syslog:x:104:111::/home/syslog:/usr/sbin/nologin
uuidd:x:105:112::/run/uuidd:/usr/sbin/nologin
tcpdump:x:106:113::/nonexistent:/usr/sbin/nologin
sshd:x:107:65534::/run/sshd:/usr/sbin/nologin
ubuntu:x:1000:1000:Ubuntu:/home/ubuntu:/bin/bash
`,
};

const ROOT_DIRS: Record<Flavour, string[]> = {
  alpine: ["bin", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"],
  debian: ["bin", "boot", "dev", "etc", "home", "lib", "lib64", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"],
  ubuntu: ["bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"],
  host: ["bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "lost+found", "media", "mnt", "opt", "proc", "root", "run", "sbin", "snap", "srv", "swap.img", "sys", "tmp", "usr", "var"],
};

export function rootListing(flavour: Flavour): string[] {
  return ROOT_DIRS[flavour];
}

/** A file's text in this filesystem, or null when it has no such file. */
export function readFile(flavour: Flavour, path: string, hostname: string): string | null {
  switch (path.replace(/\/+/g, "/")) {
    case "/etc/os-release":
    case "/usr/lib/os-release":
      return OS_RELEASE[flavour];
    case "/etc/issue":
      return ISSUE[flavour];
    case "/etc/hostname":
      return `${hostname}\n`;
    case "/etc/passwd":
      return PASSWD[flavour];
    case "/proc/version":
      return `Linux version ${KERNEL} (buildd@lcy02-amd64-051) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) ${KERNEL_BUILD}\n`;
    case "/etc/alpine-release":
      return flavour === "alpine" ? "3.20.3\n" : null;
    case "/etc/debian_version":
      return flavour === "debian" ? "12.7\n" : flavour === "alpine" ? null : "bookworm/sid\n";
    default:
      return null;
  }
}
