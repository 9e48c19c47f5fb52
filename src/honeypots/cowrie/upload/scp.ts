/**
 * The sink side of the legacy SCP protocol (`scp -t TARGET`, what `scp -O` and older clients
 * run over exec): C (file), D/E (directory in/out) and T (times) records, each answered with a
 * zero byte. Files are captured as artifacts (./capture.ts) and appear in the fake filesystem.
 */
import type { ServerChannel } from "ssh2";
import { OutboxFull, type Outbox } from "../../shared/outbox.ts";
import type { CowrieSession } from "../session.ts";
import { FakeFs } from "../shell/fakefs.ts";
import { account } from "../shell/host.ts";
import { Upload } from "./capture.ts";

/** A record line longer than this is not SCP. */
const MAX_LINE = 4096;

/** The target of `scp ... -t TARGET`, or null when the command is not an SCP sink. */
export function scpSinkTarget(command: string): string | null {
  const words = command.trim().split(/\s+/);
  if (words[0] !== "scp" && words[0] !== "/usr/bin/scp") return null;
  const flags = words.slice(1, -1);
  if (!flags.some((w) => /^-[a-zA-Z]*t[a-zA-Z]*$/.test(w))) return null;
  const target = words.at(-1) ?? ".";
  return target.replace(/^'(.*)'$/, "$1");
}

export interface ScpOptions {
  hostname: string;
  username: string;
  outbox: Outbox;
  maxBytes: number;
  session: CowrieSession;
}

export function serveScpSink(stream: ServerChannel, target: string, opts: ScpOptions): void {
  const { home } = account(opts.username);
  const fs = new FakeFs(opts.hostname, opts.username, home);
  const root = fs.resolve(home, target, home);
  const dirs: string[] = [root];
  let pending: Buffer = Buffer.alloc(0);
  let current: { upload: Upload; remaining: number; offset: number } | null = null;
  let ended = false;
  const ok = () => stream.write(Buffer.from([0]));
  const fail = (message: string) => {
    stream.write(Buffer.concat([Buffer.from([1]), Buffer.from(`scp: ${message}\n`)]));
    finish(1);
  };
  const finish = (status: number) => {
    if (ended) return;
    ended = true;
    current?.upload.close();
    current = null;
    stream.exit(status);
    stream.end();
  };
  const into = (name: string) => {
    const dir = dirs.at(-1)!;
    return fs.kind(dir) === "dir" ? `${dir === "/" ? "" : dir}/${name}` : dir;
  };

  const process = () => {
    while (!ended) {
      if (current) {
        if (current.remaining > 0) {
          if (pending.length === 0) return;
          const take = pending.subarray(0, Math.min(current.remaining, pending.length));
          current.upload.write(current.offset, take);
          current.offset += take.length;
          current.remaining -= take.length;
          pending = pending.subarray(take.length);
          continue;
        }
        // The file's bytes are followed by the client's zero byte.
        if (pending.length === 0) return;
        pending = pending.subarray(1);
        current.upload.close();
        current = null;
        ok();
        continue;
      }
      const nl = pending.indexOf(10);
      if (nl < 0) {
        if (pending.length > MAX_LINE) fail("protocol error: record too long");
        return;
      }
      const line = pending.subarray(0, nl).toString("utf8");
      pending = pending.subarray(nl + 1);
      const kind = line[0];
      if (kind === "C") {
        const m = /^C[0-7]{4} (\d{1,15}) ([^/]+)$/.exec(line);
        if (!m) return fail("protocol error: bad file record");
        const path = into(m[2]!);
        fs.write(path, "", false);
        let upload: Upload;
        try {
          upload = new Upload(opts.outbox, opts.session, path, opts.maxBytes, "scp");
        } catch (err) {
          if (err instanceof OutboxFull) return fail(`${path}: No space left on device`);
          throw err;
        }
        current = { upload, remaining: Number(m[1]), offset: 0 };
        ok();
      } else if (kind === "D") {
        const m = /^D[0-7]{4} \d+ ([^/]+)$/.exec(line);
        if (!m) return fail("protocol error: bad directory record");
        const path = into(m[1]!);
        if (fs.kind(path) !== "dir") fs.mkdir(path);
        dirs.push(path);
        ok();
      } else if (kind === "E") {
        if (dirs.length > 1) dirs.pop();
        ok();
      } else if (kind === "T") ok();
      else if (kind === "\x01" || kind === "\x02") continue;
      else return fail("protocol error: unexpected record");
    }
  };

  stream.on("data", (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    process();
  });
  stream.on("end", () => finish(0));
  stream.on("close", () => finish(0));
  stream.on("error", () => {});
  ok();
}
