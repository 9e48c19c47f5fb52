/**
 * The real fetches behind the fake shell's download tools (docs/artifacts.md): from the node's
 * network, bounded in size and time, into the pot's outbox (mode 0600, never executed). HTTP(S)
 * for wget and curl, TFTP for tftp, FTP for ftpget. Addresses on private, loopback and
 * link-local networks are refused unless `download_private` allows them, so an attacker cannot
 * use the honeypot to reach the sensor's own services or its cloud metadata endpoint.
 */
import { BlockList, isIP } from "node:net";
import { lookup } from "node:dns/promises";
import type { FetchRequest, FetchResult } from "../shell/shell.ts";
import { OutboxFull, type Outbox, type OutboxFile, type SightingMeta } from "../../shared/outbox.ts";
import { tftpGet } from "./tftp.ts";
import { ftpGet } from "./ftp.ts";

export interface FetcherOptions {
  enabled: boolean;
  maxBytes: number;
  timeoutMs: number;
  allowPrivate: boolean;
  outbox: Outbox;
}

const MAX_REDIRECTS = 5;
/** What the shell keeps of a file as text (cat of the saved file; the fake disk is small). */
const TEXT_BYTES = 64 * 1024;
const USER_AGENT: Record<FetchRequest["tool"], string> = { wget: "Wget/1.21.3", curl: "curl/7.88.1", tftp: "", ftpget: "" };

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  // The documentation networks (RFC 5737): never routed, so a fetch could only hang.
  ["192.0.2.0", 24],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
] as const)
  PRIVATE.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 127],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["::ffff:0:0", 96],
] as const)
  PRIVATE.addSubnet(net, bits, "ipv6");

export type Failure = Extract<FetchResult, { ok: false }>;

/** A stream of bytes being saved: hashed, bounded, with the first bytes kept as text. */
export class Capture {
  readonly file: OutboxFile;
  private head: Uint8Array[] = [];
  private headBytes = 0;
  truncated = false;

  constructor(
    outbox: Outbox,
    readonly maxBytes: number,
  ) {
    this.file = outbox.begin();
  }

  /** False once the limit is reached (the rest is not wanted). */
  push(bytes: Uint8Array): boolean {
    const room = this.maxBytes - this.file.size;
    const take = bytes.length > room ? bytes.subarray(0, room) : bytes;
    this.file.write(take);
    if (this.headBytes < TEXT_BYTES) {
      this.head.push(take.subarray(0, TEXT_BYTES - this.headBytes));
      this.headBytes += Math.min(take.length, TEXT_BYTES - this.headBytes);
    }
    if (bytes.length > room) this.truncated = true;
    return !this.truncated;
  }

  text(): string {
    return Buffer.concat(this.head).toString("latin1");
  }
}

export class Fetcher {
  constructor(private readonly opts: FetcherOptions) {}

  async fetch(req: FetchRequest, meta: SightingMeta): Promise<FetchResult> {
    if (!this.opts.enabled) return { ok: false, error: "disabled", message: "downloads are turned off" };
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return { ok: false, error: "resolve", message: `invalid URL ${req.url}` };
    }
    const started = performance.now();
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    let capture: Capture;
    try {
      capture = new Capture(this.opts.outbox, this.opts.maxBytes);
    } catch (err) {
      if (err instanceof OutboxFull) return { ok: false, error: "full", message: err.message };
      throw err;
    }
    let result: FetchResult;
    try {
      result = await this.get(req, url, capture, signal);
    } catch (err) {
      const timedOut = signal.aborted || (err as Error).name === "TimeoutError";
      result = { ok: false, error: timedOut ? "timeout" : "refused", message: timedOut ? "timed out" : (err as Error).message };
    }
    if (!result.ok) {
      capture.file.abort();
      return result;
    }
    const saved = capture.file.finish({ ...meta, url: req.url, truncated: capture.truncated });
    return { ...result, size: saved.size, sha256: saved.sha256, outfile: saved.outfile, truncated: capture.truncated, text: capture.text(), ms: Math.round(performance.now() - started) };
  }

  /** The address a host name resolves to, or why it may not be used. */
  async address(host: string): Promise<{ address: string } | Failure> {
    const bare = host.replace(/^\[|\]$/g, "");
    let addresses: string[];
    if (isIP(bare)) addresses = [bare];
    else {
      try {
        addresses = (await lookup(bare, { all: true })).map((a) => a.address);
      } catch {
        return { ok: false, error: "resolve", message: `unable to resolve host address ${bare}` };
      }
    }
    if (addresses.length === 0) return { ok: false, error: "resolve", message: `unable to resolve host address ${bare}` };
    const first = addresses[0]!;
    if (!this.opts.allowPrivate && addresses.some((a) => PRIVATE.check(a, isIP(a) === 6 ? "ipv6" : "ipv4"))) {
      // Shown to the attacker as a refused connection, as a firewalled host would answer.
      return { ok: false, error: "blocked", address: first, message: `${bare} is on a private network` };
    }
    return { address: first };
  }

  private async get(req: FetchRequest, url: URL, capture: Capture, signal: AbortSignal): Promise<FetchResult> {
    const resolved = await this.address(url.hostname);
    if ("ok" in resolved) return resolved;
    const base = { status: 200, statusText: "OK", contentType: null, length: null, size: 0, sha256: "", outfile: "", truncated: false, text: "", address: resolved.address, ms: 0 };
    if (url.protocol === "tftp:") {
      const failure = await tftpGet(resolved.address, Number(url.port) || 69, decodeURIComponent(url.pathname.replace(/^\//, "")), capture, signal);
      return failure ?? { ok: true, ...base };
    }
    if (url.protocol === "ftp:") {
      const failure = await ftpGet(resolved.address, Number(url.port) || 21, decodeURIComponent(url.pathname), capture, signal);
      return failure ?? { ok: true, ...base };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, error: "resolve", message: `unsupported scheme ${url.protocol}` };
    let current = url;
    for (let hop = 0; ; hop++) {
      const res = await fetch(current, { redirect: "manual", signal, headers: { "user-agent": USER_AGENT[req.tool], accept: "*/*" }, tls: { rejectUnauthorized: false } } as RequestInit);
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location && hop < MAX_REDIRECTS) {
        await res.body?.cancel();
        current = new URL(location, current);
        const next = await this.address(current.hostname);
        if ("ok" in next) return next;
        continue;
      }
      if (res.status >= 400) {
        await res.body?.cancel();
        return { ok: false, error: "http", status: res.status, statusText: res.statusText, address: resolved.address, message: `${res.status} ${res.statusText}` };
      }
      const declared = res.headers.get("content-length");
      if (res.body) {
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!capture.push(value)) {
            await reader.cancel();
            break;
          }
        }
      }
      return { ok: true, ...base, status: res.status, statusText: res.statusText, contentType: res.headers.get("content-type"), length: declared !== null && /^\d+$/.test(declared) ? Number(declared) : null };
    }
  }
}
