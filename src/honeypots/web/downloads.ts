/**
 * Fetching the payloads that exploit requests point at, through cowrie's bounded downloader
 * (size, time, private addresses refused, saved 0600 in the outbox, never executed). Beyond it,
 * what a web honeypot needs: a botnet fires the same exploit with the same URL thousands of
 * times, so a URL fetched in the last hour is not fetched again (its event repeats the file's
 * hash with `duplicate: true`), the same URL asked twice at once is fetched once, and no more than
 * MAX_ACTIVE fetches run at a time, so attackers cannot turn the pot into a download amplifier.
 */
import { Fetcher } from "../cowrie/downloads/fetcher.ts";
import type { Outbox } from "../shared/outbox.ts";
import type { PotSession } from "../shared/session.ts";

export interface DownloadOptions {
  enabled: boolean;
  maxBytes: number;
  timeoutMs: number;
  allowPrivate: boolean;
  outbox: Outbox;
}

const MAX_ACTIVE = 4;
const REMEMBER_MS = 60 * 60 * 1000;
const REMEMBER_URLS = 1000;

type Outcome = { ok: true; fields: Record<string, unknown> } | { ok: false; reason: string };

function filename(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
  } catch {
    return "";
  }
}

export class Payloads {
  private readonly fetcher: Fetcher;
  private readonly inFlight = new Map<string, Promise<Outcome>>();
  /** Successful fetches by URL, oldest first (a Map keeps insertion order). */
  private readonly recent = new Map<string, { at: number; fields: Record<string, unknown> }>();

  constructor(private readonly opts: DownloadOptions) {
    this.fetcher = new Fetcher(opts);
  }

  /** Fetches `url` (or recalls it) and records the outcome in `session`. */
  async fetch(url: string, tool: "wget" | "curl", session: PotSession): Promise<void> {
    if (!this.opts.enabled) {
      session.emit("session.file_download", { url });
      return;
    }
    const known = this.recent.get(url);
    if (known && Date.now() - known.at < REMEMBER_MS) {
      session.emit("session.file_download", { ...known.fields, duplicate: true });
      return;
    }
    let pending = this.inFlight.get(url);
    if (!pending) {
      if (this.inFlight.size >= MAX_ACTIVE) {
        session.emit("session.file_download.failed", { url, reason: "too many downloads in progress" });
        return;
      }
      pending = this.get(url, tool, session.id).finally(() => this.inFlight.delete(url));
      this.inFlight.set(url, pending);
    }
    const outcome = await pending;
    if (outcome.ok) session.emit("session.file_download", outcome.fields);
    else session.emit("session.file_download.failed", { url, reason: outcome.reason });
  }

  private async get(url: string, tool: "wget" | "curl", session: string): Promise<Outcome> {
    const name = filename(url);
    let result: Awaited<ReturnType<Fetcher["fetch"]>>;
    try {
      result = await this.fetcher.fetch({ url, tool }, { source: "web.session.file_download", session, filename: name });
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    }
    if (!result.ok) return { ok: false, reason: result.message };
    const fields: Record<string, unknown> = { url, shasum: result.sha256, outfile: result.outfile, size: result.size, filename: name };
    if (result.truncated) Object.assign(fields, { truncated: true, limit: this.opts.maxBytes });
    this.recent.delete(url);
    this.recent.set(url, { at: Date.now(), fields });
    if (this.recent.size > REMEMBER_URLS) this.recent.delete(this.recent.keys().next().value!);
    return { ok: true, fields };
  }
}
