/**
 * Syslog output: RFC 5424 messages over UDP (RFC 5426, a datagram each), TCP (RFC 6587 octet
 * counting) or TLS (RFC 5425). Syslog has no acknowledgements, so what "delivered" means
 * depends on the transport (docs/outputs.md):
 * - TCP and TLS: a batch counts as delivered once written and the connection is still up
 *   CONFIRM_MS later; a receiver that goes away closes the connection, the batch fails and is
 *   sent again after a reconnect. At least once; what a receiver read but did not write
 *   before it died is lost (RELP would be needed to know).
 * - UDP: handed to the network; a receiver that is down loses those messages. Best effort.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { connect as tcpConnect, isIPv6, type Socket } from "node:net";
import { hostname } from "node:os";
import { connect as tlsConnect } from "node:tls";
import { octetCounted, toRfc5424, type SyslogOptions } from "./format/rfc5424";
import type { SyslogOutput } from "./model";
import type { Sink } from "./sink";

/** How long a connection must survive a write for its batch to count (a closing receiver's FIN arrives well within it). */
export const CONFIRM_MS = 25;
const CONNECT_TIMEOUT_MS = 10_000;

export function syslogSink(def: SyslogOutput): Sink {
  const options: SyslogOptions = { facility: def.facility ?? 16, hostname: def.hostname ?? hostname(), format: def.format ?? "json" };
  const protocol = def.protocol ?? "tcp";
  const port = def.port ?? (protocol === "tls" ? 6514 : 514);
  if (protocol === "udp") return udpSink(def.host, port, options);
  return streamSink(def, port, options);
}

function udpSink(host: string, port: number, options: SyslogOptions): Sink {
  let socket: UdpSocket | null = null;
  return {
    async send(events) {
      socket ??= createSocket(isIPv6(host) ? "udp6" : "udp4");
      const s = socket;
      await Promise.all(
        events.map(
          (e) => new Promise<void>((resolve, reject) => s.send(Buffer.from(toRfc5424(e, options)), port, host, (err) => (err ? reject(err) : resolve()))),
        ),
      );
    },
    async close() {
      socket?.close();
      socket = null;
    },
  };
}

function streamSink(def: SyslogOutput, port: number, options: SyslogOptions): Sink {
  let socket: Socket | null = null;
  let broken: Error | null = null;
  let onBreak: ((e: Error) => void) | null = null;
  let closed = false;

  const connect = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const s =
        def.protocol === "tls"
          ? tlsConnect({ host: def.host, port, servername: isIPv6(def.host) || /^[\d.]+$/.test(def.host) ? undefined : def.host, ca: def.tls_ca ? readFileSync(def.tls_ca) : undefined, rejectUnauthorized: !def.tls_insecure })
          : tcpConnect({ host: def.host, port });
      const ready = def.protocol === "tls" ? "secureConnect" : "connect";
      const fail = (e: Error) => {
        s.destroy();
        reject(e);
      };
      const timer = setTimeout(() => fail(new Error(`no connection to ${def.host}:${port} within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      s.once("error", fail);
      s.once(ready, () => {
        clearTimeout(timer);
        s.off("error", fail);
        broken = null;
        const lost = (e: Error) => {
          broken ??= e;
          if (socket === s) socket = null;
          s.destroy();
          onBreak?.(broken);
        };
        s.on("error", lost);
        s.on("end", () => lost(new Error(`${def.host}:${port} closed the connection`)));
        s.on("close", () => lost(new Error(`connection to ${def.host}:${port} closed`)));
        // The receiver sends nothing; whatever it does send is read and dropped.
        s.on("data", () => {});
        resolve(s);
      });
    });

  return {
    async send(events) {
      if (closed) throw new Error("output stopped");
      socket ??= await connect();
      const s = socket;
      if (closed) {
        s.destroy();
        socket = null;
        throw new Error("output stopped");
      }
      const data = events.map((e) => octetCounted(toRfc5424(e, options))).join("");
      const gone = new Promise<never>((_, reject) => (onBreak = reject));
      gone.catch(() => {});
      try {
        await Promise.race([new Promise<void>((resolve, reject) => s.write(data, (err) => (err ? reject(err) : resolve()))), gone]);
        await Promise.race([Bun.sleep(CONFIRM_MS), gone]);
        if (broken || socket !== s) throw broken ?? new Error("connection lost");
      } finally {
        onBreak = null;
      }
    },
    async close() {
      closed = true;
      onBreak?.(new Error("output stopped"));
      socket?.destroy();
      socket = null;
    },
  };
}

