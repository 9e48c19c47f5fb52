/**
 * The web kind: a plain HTTP listener and (with `tls`) a TLS one, both bounded TCP listeners
 * (src/honeypots/shared/listener.ts) carrying the same fake Apache or nginx site. One session per
 * TCP connection: web.session.connect at accept, the TLS client's fingerprints as soon as its
 * ClientHello is read, every request as it completes, web.session.closed at the end (after the
 * connection's downloads have finished, so their events belong to the session).
 */
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Socket } from "node:net";
import { createSecureContext, type SecureContext, type TLSSocket } from "node:tls";
import type manifest from "../../../catalogue/web/manifest.json";
import { parseByteCount, parsePort, parsePositiveInt } from "../shared/config.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { type Listener, listen } from "../shared/listener.ts";
import { Outbox } from "../shared/outbox.ts";
import { PotSession, printable } from "../shared/session.ts";
import { CERT_FILE, ensureCertificate } from "./certificate.ts";
import { type ClientHello, isGrease } from "./clienthello.ts";
import { type CompletedRequest, HttpConnection, type Transport } from "./connection.ts";
import { Payloads } from "./downloads.ts";
import { ja3Hash, ja3Text, ja4, offeredVersion, versionName } from "./fingerprint.ts";
import { APACHE_LIMITS } from "./http-parse.ts";
import { Persona, type Reply, type ServerKind } from "./persona.ts";
import { ConnectionRecorder } from "./recorder.ts";
import { clientHost, route, type SiteOptions } from "./site.ts";
import { acceptTls, type HelloOutcome } from "./tls.ts";

/**
 * A connection's whole life at most. Apache's RequestReadTimeout would cut a slow client sooner;
 * this bounds one that keeps a connection busy within the idle limit.
 */
const SESSION_LIMIT_MS = 10 * 60 * 1000;
/** Answers written and not yet taken by the client, per connection, before it is cut off. */
const MAX_UNREAD_BYTES = 512 * 1024;

function flag(value: string): boolean {
  return value === "true";
}

/** The fields of web.tls.client_hello. */
function helloFields(hello: ClientHello): Record<string, unknown> {
  const text = ja3Text(hello);
  return {
    ja3: text,
    ja3_hash: ja3Hash(text),
    ...ja4(hello),
    sni: hello.sni === null ? null : printable(Buffer.from(hello.sni, "latin1")),
    alpn: hello.alpn.map((p) => printable(p)),
    tls_version: versionName(offeredVersion(hello)),
    ciphers: hello.ciphers.filter((c) => !isGrease(c)).length,
  };
}

export async function startWeb({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const persona = new Persona(config.server as ServerKind);
  const bodyMax = parsePositiveInt("body_max_bytes", config.body_max_bytes);
  const maxRequests = parsePositiveInt("max_requests", config.max_requests);
  const maxConnections = parsePositiveInt("max_connections", config.max_connections);
  const idleMs = parsePositiveInt("idle_timeout", config.idle_timeout) * 1000;
  const downloadMaxBytes = parsePositiveInt("download_max_bytes", config.download_max_bytes);
  const payloads = new Payloads({
    enabled: flag(config.download),
    maxBytes: downloadMaxBytes,
    timeoutMs: parsePositiveInt("download_timeout", config.download_timeout) * 1000,
    allowPrivate: flag(config.download_private),
    outbox: new Outbox(process.cwd(), parseByteCount("outbox_max_bytes", config.outbox_max_bytes)),
  });
  const certificate = ensureCertificate(process.cwd(), config.hostname);
  if (certificate.created) logger.info({ file: CERT_FILE }, "made the TLS certificate");
  const site: SiteOptions = {
    persona,
    hostname: config.hostname,
    envBait: flag(config.env_bait),
    // The pot's own key makes the bait's secrets stable across restarts and different between pots.
    seed: createHash("sha256").update(certificate.key).digest("hex"),
    title: config.site_title,
    installedAt: statSync(join(process.cwd(), CERT_FILE)).mtime,
  };
  const context: SecureContext = createSecureContext({ key: certificate.key, cert: certificate.cert, minVersion: "TLSv1.2" });
  const { promise: stopped, resolve: stop } = Promise.withResolvers<void>();

  const serve = (socket: Socket, tlsPort: boolean) => {
    const session = PotSession.accepted(socket, "web", tlsPort ? "https" : "http", sink, { tls: tlsPort });
    const recorder = new ConnectionRecorder(session, payloads);
    const closing: Record<string, unknown> = {};
    let http: HttpConnection | null = null;

    const startHttp = (transport: Transport, tls: boolean, plainToTls: boolean) => {
      const answer = (req: CompletedRequest): Reply => {
        if (!plainToTls) return route({ method: req.head.method, target: req.head.target, headers: req.head.headers, tls }, site);
        return persona.errorReply(400, { method: req.head.method, ...clientHost(req.head.headers, true, config.hostname), plainToTls: true });
      };
      http = new HttpConnection(transport, { persona, hostname: config.hostname, tls, plainToTls, bodyMax, maxRequests, limits: APACHE_LIMITS }, {
        request: (req) => {
          const reply = answer(req);
          recorder.request(req, reply);
          return reply;
        },
        abandoned: (req) => recorder.request(req, null),
        invalid: (info) => recorder.invalid(info),
      });
      return http;
    };
    const transportOf = (stream: Socket | TLSSocket): Transport => ({
      write: (bytes) => {
        if (stream.destroyed) return;
        stream.write(bytes);
        // A client that pipelines requests and never reads the answers would have them pile up here.
        if (stream.writableLength + socket.writableLength > MAX_UNREAD_BYTES) socket.destroy();
      },
      end: () => stream.end(),
    });

    if (!tlsPort) {
      const conn = startHttp(transportOf(socket), false, false);
      socket.on("data", (chunk: Buffer) => conn.feed(chunk));
    } else {
      acceptTls(socket, context, {
        hello: (outcome: HelloOutcome) => {
          if ("error" in outcome) {
            session.emit("tls.client_hello", { error: outcome.error });
            return;
          }
          const fields = helloFields(outcome.hello);
          session.emit("tls.client_hello", fields);
          recorder.tls = { ja3: fields.ja3 as string, ja3_hash: fields.ja3_hash as string, ja4: fields.ja4 as string, sni: fields.sni as string | null };
          Object.assign(closing, { ja3: fields.ja3, ja3_hash: fields.ja3_hash, ja4: fields.ja4, sni: fields.sni });
        },
        secure: (tls) => {
          Object.assign(closing, { tls_version: tls.getProtocol(), tls_cipher: tls.getCipher()?.name ?? null, alpn: tls.alpnProtocol || null });
          const conn = startHttp(transportOf(tls), true, false);
          tls.on("data", (chunk: Buffer) => conn.feed(chunk));
        },
        plain: (first) => {
          const conn = startHttp(transportOf(socket), true, true);
          closing.plain_http = true;
          conn.feed(first);
          socket.on("data", (chunk: Buffer) => conn.feed(chunk));
        },
        failed: (reason) => {
          closing.tls_error = reason;
        },
      });
    }

    socket.on("close", () => {
      http?.closed();
      const done = () => session.close({ requests: http?.requests ?? 0, ...closing });
      if (recorder.pending.size === 0) return done();
      // The session ends once its downloads have (each is bounded by download_timeout), or at once when the pot stops.
      void Promise.race([Promise.allSettled([...recorder.pending]), stopped]).then(done);
    });
  };

  const host = config.listen_address;
  const listeners: Listener[] = [];
  const opts = { host, maxConnections, idleMs, totalMs: SESSION_LIMIT_MS, logger };
  try {
    listeners.push(await listen({ ...opts, name: "http", port: parsePort("http_port", config.http_port) }, (s) => serve(s, false)));
    if (flag(config.tls)) listeners.push(await listen({ ...opts, name: "https", port: parsePort("https_port", config.https_port) }, (s) => serve(s, true)));
  } catch (err) {
    await Promise.all(listeners.map((l) => l.close()));
    throw err;
  }
  const ports: Record<string, number> = { http: listeners[0]!.port };
  if (listeners[1]) ports.https = listeners[1].port;

  return {
    ports,
    async stop() {
      stop();
      await Promise.all(listeners.map((l) => l.close()));
    },
  };
}
