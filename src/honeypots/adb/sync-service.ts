/**
 * The `sync:` service: what `adb push`, `adb pull` and `adb ls` speak. Stats and listings come
 * from the fake file tree; every pushed file is captured (./capture.ts) and recorded as
 * adb.session.file_upload, and appears in the tree for the rest of the session. Pulls fail as
 * adbd's open() would: nothing leaves the honeypot.
 */
import { PushCapture } from "./capture.ts";
import { FakeFs, type FsNode, modeOf, S_IFLNK } from "./filesystem.ts";
import { dent, dentDone, ENOENT, fail, okay, type SyncStat, SyncDecoder, type SyncRequest, splitSendSpec, statV1, statV2, SYNC_FLAG_DRY_RUN } from "./sync-protocol.ts";
import type { DeviceContext, Service, StreamIO } from "./stream.ts";

interface Push {
  path: string;
  mode: number;
  capture: PushCapture;
  /** Why the device refused the file (answered with FAIL at once); it is still captured. */
  refused: string | null;
}

function statOf(node: FsNode): SyncStat {
  return { mode: modeOf(node), size: node.size, mtime: node.mtime, uid: node.uid, gid: node.gid, nlink: node.kind === "dir" ? 2 : 1, ino: node.ino };
}

/** adbd copies the owner's permission bits to group and others (send_impl). */
function deviceMode(mode: number): number {
  let m = mode & 0o777;
  m |= (m >> 3) & 0o070;
  m |= (m >> 3) & 0o007;
  return m;
}

export class SyncService implements Service {
  private readonly decoder = new SyncDecoder();
  private push: Push | null = null;
  private done = false;

  constructor(
    private readonly io: StreamIO,
    private readonly ctx: DeviceContext,
  ) {}

  data(bytes: Buffer): void {
    if (this.done) return;
    for (const request of this.decoder.push(bytes)) {
      if (this.done) return;
      this.handle(request);
    }
  }

  closed(): void {
    this.done = true;
    this.push?.capture.abort();
    this.push = null;
  }

  private end(message?: string): void {
    if (message !== undefined) this.io.write(fail(message));
    this.done = true;
    this.push?.capture.abort();
    this.push = null;
    this.io.close();
  }

  private handle(request: SyncRequest): void {
    switch (request.type) {
      case "fail":
        return this.end(request.message);
      case "data":
        this.push?.capture.write(request.bytes);
        return;
      case "done":
        return this.finishPush(request.mtime);
      case "send2":
        // SND2 is sendrecv_v2, which this device does not announce; an uncompressed one is taken.
        if ((request.flags & ~SYNC_FLAG_DRY_RUN) !== 0) return this.end(`unknown flags: ${request.flags}`);
        return this.startPush(request.path, request.mode);
      case "recv2":
        return this.recv(request.path);
      case "request":
        return this.request(request.id, request.path);
    }
  }

  private request(id: string, path: string): void {
    const abs = FakeFs.resolve("/", path);
    switch (id) {
      case "STAT": {
        const node = this.ctx.fs.lookup(abs, false);
        this.io.write(statV1(node ? statOf(node) : null));
        return;
      }
      case "STA2":
      case "LST2": {
        const node = this.ctx.fs.lookup(abs, id === "STA2");
        this.io.write(statV2(id, node ? statOf(node) : null, ENOENT));
        return;
      }
      case "LIST":
      case "LIS2": {
        const listing = this.ctx.fs.list(abs);
        const v2 = id === "LIS2";
        const parts: Buffer[] = [];
        if ("entries" in listing) {
          const self = this.ctx.fs.lookup(abs) as FsNode;
          parts.push(dent(".", statOf(self), v2), dent("..", statOf(self), v2));
          for (const [name, node] of listing.entries) parts.push(dent(name, statOf(node), v2));
        }
        parts.push(dentDone(v2));
        this.io.write(Buffer.concat(parts));
        return;
      }
      case "SEND": {
        const spec = splitSendSpec(path);
        if (!spec) return this.end("missing , in ID_SEND_V1");
        return this.startPush(spec.path, spec.mode);
      }
      case "RECV":
        return this.recv(path);
      default:
        // QUIT, or a path request adbd would not take here.
        return this.end();
    }
  }

  private startPush(path: string, mode: number): void {
    const abs = FakeFs.resolve("/", path);
    // adbd makes the file before the data comes; a refusal is answered at once, and the data
    // that follows regardless is still read (and here kept).
    const refused = (mode & 0o170000) === S_IFLNK ? null : this.ctx.fs.put(abs, deviceMode(mode), 0, Math.floor(Date.now() / 1000), new Uint8Array(0));
    if (refused) this.io.write(fail(refused));
    this.push = { path: abs, mode, capture: new PushCapture(this.ctx.outbox, this.ctx.uploadMax), refused };
  }

  private finishPush(mtime: number): void {
    const push = this.push;
    if (!push) return this.end("invalid data message");
    this.push = null;
    const { session } = this.ctx;
    const saved = push.capture.finish({ source: "adb.session.file_upload", session: session.id, url: push.path, filename: push.path });
    const fields: Record<string, unknown> = {
      filename: push.path,
      shasum: saved.shasum,
      outfile: saved.outfile,
      size: saved.size,
      truncated: saved.truncated,
      mode: (push.mode & 0o7777).toString(8).padStart(4, "0"),
      protocol_upload: "sync",
    };
    if (saved.truncated) {
      fields.limit = this.ctx.uploadMax;
      fields.sent = saved.sent;
    }
    if (push.refused) fields.refused = push.refused;
    session.emit("session.file_upload", fields);
    if (push.refused) return this.end();
    if ((push.mode & 0o170000) !== S_IFLNK) this.ctx.fs.put(push.path, deviceMode(push.mode), saved.sent, mtime, push.capture.head());
    this.io.write(okay());
  }

  private recv(path: string): void {
    const node = this.ctx.fs.lookup(FakeFs.resolve("/", path));
    this.end(`open failed: ${node ? "Permission denied" : "No such file or directory"}`);
  }
}
