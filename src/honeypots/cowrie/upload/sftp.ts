/**
 * The SFTP subsystem (what `sftp` and OpenSSH 9's `scp` speak): a view of the fake filesystem
 * in which uploads succeed. Files written are captured as artifacts (./capture.ts) and appear in
 * the fake filesystem; reads serve the fake files. Nothing is written anywhere else.
 */
import { utils, type SFTPWrapper } from "ssh2";
import { OutboxFull, type Outbox } from "../../shared/outbox.ts";
import type { CowrieSession } from "../session.ts";
import { FakeFs } from "../shell/fakefs.ts";
import { account } from "../shell/host.ts";
import { Upload } from "./capture.ts";

const { OPEN_MODE, STATUS_CODE } = utils.sftp;
/** Open handles per channel; OpenSSH keeps a few. */
const MAX_HANDLES = 64;

type Handle = { kind: "write"; upload: Upload } | { kind: "read"; content: Buffer } | { kind: "dir"; path: string; done: boolean };

export interface SftpOptions {
  hostname: string;
  username: string;
  outbox: Outbox;
  maxBytes: number;
  session: CowrieSession;
}

export function serveSftp(sftp: SFTPWrapper, opts: SftpOptions): void {
  const { uid, home } = account(opts.username);
  const fs = new FakeFs(opts.hostname, opts.username, home);
  const handles = new Map<number, Handle>();
  let next = 0;
  const resolve = (path: string) => fs.resolve(home, path || ".", home);
  const attrs = (path: string) => {
    const dir = fs.kind(path) === "dir";
    const now = Math.floor(Date.now() / 1000);
    return { mode: dir ? 0o40755 : 0o100644, uid: path.startsWith(home) ? uid : 0, gid: path.startsWith(home) ? uid : 0, size: fs.size(path), atime: now, mtime: now };
  };
  const longname = (name: string, path: string) => {
    const a = attrs(path);
    const user = a.uid === 0 ? "root" : opts.username;
    return `${fs.kind(path) === "dir" ? "drwxr-xr-x" : "-rw-r--r--"}    1 ${user.padEnd(8)} ${user.padEnd(8)} ${String(a.size).padStart(8)} Jan  1 00:00 ${name}`;
  };
  const newHandle = (h: Handle, reqid: number) => {
    if (handles.size >= MAX_HANDLES) return sftp.status(reqid, STATUS_CODE.FAILURE, "too many open files");
    const id = next++;
    handles.set(id, h);
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(id);
    sftp.handle(reqid, buf);
  };
  const handleOf = (buf: Buffer) => (buf.length === 4 ? buf.readUInt32BE(0) : -1);
  const stat = (reqid: number, path: string) => {
    const p = resolve(path);
    if (!fs.kind(p)) return sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, "No such file");
    sftp.attrs(reqid, attrs(p));
  };

  sftp.on("REALPATH", (reqid, path) => {
    const p = resolve(path);
    sftp.name(reqid, [{ filename: p, longname: p, attrs: {} as never }]);
  });
  sftp.on("STAT", (reqid, path) => stat(reqid, path));
  sftp.on("LSTAT", (reqid, path) => stat(reqid, path));
  sftp.on("OPEN", (reqid, filename, flags) => {
    const p = resolve(filename);
    if (flags & OPEN_MODE.WRITE) {
      if (fs.kind(p) === "dir") return sftp.status(reqid, STATUS_CODE.FAILURE, "Is a directory");
      const error = fs.write(p, "", (flags & OPEN_MODE.APPEND) !== 0);
      if (error) return sftp.status(reqid, error === "No such file or directory" ? STATUS_CODE.NO_SUCH_FILE : STATUS_CODE.FAILURE, error);
      let upload: Upload;
      try {
        upload = new Upload(opts.outbox, opts.session, p, opts.maxBytes, "sftp");
      } catch (err) {
        if (err instanceof OutboxFull) return sftp.status(reqid, STATUS_CODE.FAILURE, "No space left on device");
        throw err;
      }
      return newHandle({ kind: "write", upload }, reqid);
    }
    const content = fs.read(p);
    if (content === null) return sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, "No such file");
    newHandle({ kind: "read", content: Buffer.from(content) }, reqid);
  });
  sftp.on("WRITE", (reqid, handle, offset, data) => {
    const h = handles.get(handleOf(handle));
    if (h?.kind !== "write") return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    h.upload.write(offset, data);
    sftp.status(reqid, STATUS_CODE.OK);
  });
  sftp.on("READ", (reqid, handle, offset, length) => {
    const h = handles.get(handleOf(handle));
    if (h?.kind !== "read") return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    if (offset >= h.content.length) return sftp.status(reqid, STATUS_CODE.EOF);
    sftp.data(reqid, h.content.subarray(offset, offset + length));
  });
  sftp.on("FSTAT", (reqid, handle) => {
    const h = handles.get(handleOf(handle));
    if (!h) return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    const now = Math.floor(Date.now() / 1000);
    const size = h.kind === "write" ? h.upload.size : h.kind === "read" ? h.content.length : 4096;
    sftp.attrs(reqid, { mode: h.kind === "dir" ? 0o40755 : 0o100644, uid, gid: uid, size, atime: now, mtime: now });
  });
  sftp.on("FSETSTAT", (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on("SETSTAT", (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on("CLOSE", (reqid, handle) => {
    const id = handleOf(handle);
    const h = handles.get(id);
    if (!h) return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    handles.delete(id);
    if (h.kind === "write") h.upload.close();
    sftp.status(reqid, STATUS_CODE.OK);
  });
  sftp.on("OPENDIR", (reqid, path) => {
    const p = resolve(path);
    if (fs.kind(p) !== "dir") return sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, "No such file");
    newHandle({ kind: "dir", path: p, done: false }, reqid);
  });
  sftp.on("READDIR", (reqid, handle) => {
    const h = handles.get(handleOf(handle));
    if (h?.kind !== "dir") return sftp.status(reqid, STATUS_CODE.FAILURE, "bad handle");
    if (h.done) return sftp.status(reqid, STATUS_CODE.EOF);
    h.done = true;
    const names = [".", "..", ...(fs.list(h.path) ?? [])];
    sftp.name(
      reqid,
      names.map((name) => {
        const p = name === "." ? h.path : name === ".." ? resolve(`${h.path}/..`) : `${h.path === "/" ? "" : h.path}/${name}`;
        return { filename: name, longname: longname(name, p), attrs: attrs(p) };
      }),
    );
  });
  sftp.on("MKDIR", (reqid, path) => {
    const error = fs.mkdir(resolve(path));
    sftp.status(reqid, error ? STATUS_CODE.FAILURE : STATUS_CODE.OK, error ?? undefined);
  });
  sftp.on("REMOVE", (reqid, path) => sftp.status(reqid, fs.remove(resolve(path)) ? STATUS_CODE.OK : STATUS_CODE.NO_SUCH_FILE));
  sftp.on("RMDIR", (reqid, path) => sftp.status(reqid, fs.remove(resolve(path)) ? STATUS_CODE.OK : STATUS_CODE.FAILURE));
  sftp.on("RENAME", (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on("READLINK", (reqid) => sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE));
  sftp.on("SYMLINK", (reqid) => sftp.status(reqid, STATUS_CODE.PERMISSION_DENIED));
  // A connection lost mid-file keeps what arrived: an attacker's cut upload is still evidence.
  sftp.on("close", () => {
    for (const h of handles.values()) if (h.kind === "write") h.upload.close();
    handles.clear();
  });
  // The client's EOF ends the session as sftp-server exiting does: exit status 0, then close (ssh2
  // leaves the channel open otherwise, and OpenSSH's scp counts a missing exit status as a failure).
  sftp.on("end", () => {
    const channel = sftp as unknown as { _protocol?: { exitStatus(id: number, status: number): void }; outgoing?: { id: number; state: string } };
    if (channel.outgoing?.state === "open") channel._protocol?.exitStatus(channel.outgoing.id, 0);
    sftp.end();
  });
  sftp.on("error", () => {});
}
