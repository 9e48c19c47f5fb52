/**
 * What an OPEN asks for, by the service names of adbd's daemon_service_to_fd(): shells and
 * `exec:` (./shell-service.ts), `sync:` (./sync-service.ts), an APK streamed to
 * `cmd package install`, and the device-management services, which answer as a production
 * ("user") build does. Everything else, port forwarding (`tcp:`, `local:`) included, is refused
 * as adbd refuses an unknown service: the OPEN is answered with CLSE.
 */
import { randomBytes } from "node:crypto";
import { PushCapture } from "./capture.ts";
import { ShellService } from "./shell-service.ts";
import { type DeviceContext, recordInput, type Service, type StreamIO } from "./stream.ts";
import { SyncService } from "./sync-service.ts";

/** A service that prints a fixed answer and closes, as adbd's small service threads do. */
function answer(io: StreamIO, text: string): Service {
  if (text) io.write(text);
  io.close();
  return { data() {}, closed() {} };
}

/**
 * `adb install` streams the APK into `cmd package install -S SIZE` (or `pm install -S`) through
 * `exec:`; the bytes are captured like a push and the package manager's "Success" sent back.
 */
class InstallService implements Service {
  private readonly capture: PushCapture;
  private received = 0;
  private done = false;
  private readonly path = `/data/app/vmdl${randomBytes(4).readUInt32LE(0) % 2_000_000_000}.tmp/base.apk`;

  constructor(
    private readonly io: StreamIO,
    private readonly ctx: DeviceContext,
    private readonly size: number,
  ) {
    this.capture = new PushCapture(ctx.outbox, ctx.uploadMax);
    if (size === 0) this.finish();
  }

  data(bytes: Buffer): void {
    if (this.done) return;
    const take = bytes.subarray(0, this.size - this.received);
    this.capture.write(take);
    this.received += take.length;
    if (this.received >= this.size) this.finish();
  }

  closed(): void {
    if (!this.done) this.capture.abort();
    this.done = true;
  }

  private finish(): void {
    this.done = true;
    const { session } = this.ctx;
    const saved = this.capture.finish({ source: "adb.session.file_upload", session: session.id, url: this.path, filename: this.path });
    const fields: Record<string, unknown> = {
      filename: this.path,
      shasum: saved.shasum,
      outfile: saved.outfile,
      size: saved.size,
      truncated: saved.truncated,
      mode: "0644",
      protocol_upload: "install",
    };
    if (saved.truncated) {
      fields.limit = this.ctx.uploadMax;
      fields.sent = saved.sent;
    }
    session.emit("session.file_upload", fields);
    this.io.write("Success\n");
    this.io.close();
  }
}

/**
 * The size of an APK streamed by `adb install`: `cmd package 'install' -S 1234` through exec:,
 * `package install -S 1234` through abb_exec:, or `pm install -S 1234`.
 */
export function streamedInstallSize(command: string): number | null {
  const words = command.replace(/'/g, "").trim().split(/\s+/);
  const start = words[0] === "cmd" && words[1] === "package" ? 2 : words[0] === "pm" || words[0] === "package" ? 1 : -1;
  if (start === -1 || words[start] !== "install") return null;
  const at = words.indexOf("-S", start);
  const size = at === -1 ? NaN : Number(words[at + 1]);
  return Number.isSafeInteger(size) && size >= 0 ? size : null;
}

/** The shell service's arguments: `shell[,arg,...]:command` (args v2, raw, pty, TERM=...). */
function parseShell(name: string): { v2: boolean; pty: boolean; command: string; service: string } | null {
  const colon = name.indexOf(":");
  if (colon === -1) return null;
  const args = name.slice(0, colon).split(",").slice(1);
  const command = name.slice(colon + 1);
  const v2 = args.includes("v2");
  // adbd's default: a terminal for an interactive shell, none for a command.
  const pty = args.includes("pty") ? true : args.includes("raw") ? false : command === "";
  const service = ["shell", ...args.filter((a) => !a.startsWith("TERM="))].join(",");
  return { v2, pty, command, service };
}

/** How a management service reads as a command line in events: `reboot:bootloader` -> `reboot bootloader`. */
export function serviceInput(name: string): string {
  const colon = name.indexOf(":");
  if (colon === -1) return name;
  return `${name.slice(0, colon)} ${name.slice(colon + 1)}`.trim();
}

type Starter = (io: StreamIO) => Service;

/** How to start the service an OPEN names; null when adbd would refuse it (the OPEN gets CLSE). */
export function openService(name: string, ctx: DeviceContext): Starter | null {
  const record = (refused = false) => recordInput(ctx.session, serviceInput(name), name, refused ? { refused: true } : {});
  if (name.startsWith("shell:") || name.startsWith("shell,")) {
    const opts = parseShell(name);
    if (!opts) return null;
    return (io) => new ShellService(io, ctx, opts).start();
  }
  if (name.startsWith("exec:")) {
    const command = name.slice(5);
    const size = streamedInstallSize(command);
    if (size !== null) {
      recordInput(ctx.session, command, "exec");
      return (io) => new InstallService(io, ctx, size);
    }
    return (io) => new ShellService(io, ctx, { v2: false, pty: false, command, service: "exec" }).start();
  }
  if (name.startsWith("abb:") || name.startsWith("abb_exec:")) {
    // Android Binder Bridge: `cmd` without a shell, its arguments split by NULs; abb: frames its
    // output with the shell protocol, abb_exec: sends it raw.
    const exec = name.startsWith("abb_exec:");
    const command = name.slice(name.indexOf(":") + 1).split("\0").join(" ");
    const size = exec ? streamedInstallSize(command) : null;
    if (size !== null) {
      recordInput(ctx.session, command, "abb_exec");
      return (io) => new InstallService(io, ctx, size);
    }
    return (io) => new ShellService(io, ctx, { v2: !exec, pty: false, command: `cmd ${command}`, service: exec ? "abb_exec" : "abb" }).start();
  }
  if (name === "sync:") return (io) => new SyncService(io, ctx);
  const prefix = name.slice(0, name.indexOf(":") + 1);
  switch (prefix) {
    case "reboot:":
      record();
      return (io) => {
        io.close();
        // The device goes down: adbd's transport drops with it.
        queueMicrotask(() => ctx.hangUp());
        return { data() {}, closed() {} };
      };
    case "remount:":
      record();
      return (io) => answer(io, 'Not running as root. Try "adb root" first.\n');
    case "root:":
      record();
      return (io) => answer(io, "adbd cannot run as root in production builds\n");
    case "unroot:":
      record();
      return (io) => answer(io, "adbd not running as root\n");
    case "usb:":
      record();
      return (io) => answer(io, "restarting in USB mode\n");
    case "tcpip:": {
      const port = /^\d+/.exec(name.slice(6))?.[0];
      record(port === undefined);
      if (port === undefined) return null;
      return (io) => answer(io, `restarting in TCP mode port: ${Number(port)}\n`);
    }
    case "disable-verity:":
    case "enable-verity:":
      record();
      return (io) => answer(io, `${prefix === "disable-verity:" ? "disable" : "enable"}-verity only works for userdebug builds\n`);
    default:
      record(true);
      return null;
  }
}
