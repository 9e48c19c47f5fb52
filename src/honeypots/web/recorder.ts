/**
 * What one connection leaves in the event log: each request whole (web.request), the exploit
 * families it belongs to (web.exploit), credentials it carries (web.login.failed), payloads its
 * exploit points at (web.session.file_download), requests the server refused to parse
 * (web.request.invalid), and for TLS the client's fingerprints. Captured bytes are shown with
 * `printable` (\xNN for anything but printable ASCII) and never used for anything but events.
 */
import { createHash } from "node:crypto";
import { type PotSession, printable } from "../shared/session.ts";
import { classify } from "./classify.ts";
import type { CompletedRequest, InvalidRequest } from "./connection.ts";
import type { Payloads } from "./downloads.ts";
import { ja4h } from "./fingerprint.ts";
import { credentials } from "./forms.ts";
import { header } from "./http-parse.ts";
import { payloadUrls } from "./payloads.ts";
import type { Reply } from "./persona.ts";
import { views } from "./views.ts";

/** Raw bytes of a refused request shown in its event. */
const RAW_SHOWN = 4096;

const latin1 = (text: string) => printable(Buffer.from(text, "latin1"));

/** TLS facts of the connection, repeated on its requests so each is complete on its own. */
export interface TlsFacts {
  ja3: string;
  ja3_hash: string;
  ja4: string;
  sni: string | null;
}

export class ConnectionRecorder {
  /** Downloads still running; the session's closing event waits for them. */
  readonly pending = new Set<Promise<void>>();
  tls: TlsFacts | null = null;

  constructor(
    readonly session: PotSession,
    private readonly payloads: Payloads,
  ) {}

  /** Records a request with the reply it got (null: the client never finished it, so none was sent). */
  request(req: CompletedRequest, reply: Reply | null): void {
    const { head } = req;
    const q = head.target.indexOf("?");
    const bodyText = req.body.toString("latin1");
    const fields: Record<string, unknown> = {
      method: latin1(head.method),
      uri: latin1(head.target),
      path: latin1(q < 0 ? head.target : head.target.slice(0, q)),
      query: q < 0 ? "" : latin1(head.target.slice(q + 1)),
      version: head.version,
      headers: head.headers.map(([name, value]) => latin1(`${name}: ${value}`)),
      user_agent: latin1(header(head, "user-agent") ?? ""),
      host: latin1(header(head, "host") ?? ""),
      content_type: latin1(header(head, "content-type") ?? ""),
      body: printable(req.body),
      body_size: req.bodySize,
      body_sha256: req.body.length > 0 ? createHash("sha256").update(req.body).digest("hex") : "",
      body_truncated: req.truncated,
      request_index: req.index,
      status: reply?.status ?? null,
      ja4h: ja4h(head),
      tls: this.tls !== null,
    };
    if (req.incomplete) fields.incomplete = true;
    if (this.tls) Object.assign(fields, { ja4: this.tls.ja4, ja3_hash: this.tls.ja3_hash, sni: this.tls.sni });
    this.session.emit("request", fields);

    const text = { method: head.method, target: head.target, headers: head.headers, body: bodyText };
    const findings = classify(text);
    const context = { method: fields.method, uri: fields.uri, request_index: req.index };
    for (const { family, indicator } of findings) this.session.emit("exploit", { family, indicator: latin1(indicator), ...context });

    for (const { username, password, auth } of credentials({ method: head.method, query: q < 0 ? "" : head.target.slice(q + 1), headers: head.headers, body: req.body.toString("utf8") })) {
      this.session.emit("login.failed", { username, password, auth, ...context });
    }

    if (findings.length > 0) {
      const v = views(text);
      const tool = /\bcurl\b/i.test(`${v.path} ${v.query} ${bodyText} ${head.headers.map(([, x]) => x).join(" ")}`) && !/\bwget\b/i.test(`${v.query} ${bodyText}`) ? "curl" : "wget";
      for (const url of payloadUrls(v)) {
        const job = this.payloads.fetch(url, tool, this.session).catch(() => {});
        this.pending.add(job);
        void job.finally(() => this.pending.delete(job));
      }
    }
  }

  invalid(info: InvalidRequest): void {
    this.session.emit("request.invalid", { reason: info.reason, status: info.status || null, raw: printable(info.raw.subarray(0, RAW_SHOWN)), size: info.raw.length });
  }
}
