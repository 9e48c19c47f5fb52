/**
 * The TLS port: the ClientHello is read off the raw TCP socket first (JA3 and JA4 need its
 * bytes, which no TLS library exposes), then the same bytes are replayed into a server-side
 * TLSSocket. Under Bun a TLSSocket laid over a net.Socket reads the socket's native handle and
 * never sees bytes put back with `unshift`, so it is laid over a small Duplex that yields the
 * bytes already read and then forwards the socket's.
 *
 * A client that speaks plain HTTP to this port (its first byte is no TLS record) is handed back
 * as plain bytes: Apache and nginx answer it with a 400 of their own wording.
 */
import type { Socket } from "node:net";
import { Duplex } from "node:stream";
import { type SecureContext, TLSSocket } from "node:tls";
import { type ClientHello, MAX_HELLO_BYTES, readClientHello } from "./clienthello.ts";
import { InputBuffer } from "../shared/session.ts";

export type HelloOutcome = { hello: ClientHello } | { error: string };

export interface TlsHandlers {
  /** The ClientHello was read (or could not be: `error`); called once, before the handshake. */
  hello(outcome: HelloOutcome): void;
  /** The handshake is done: plaintext flows over `tls`. */
  secure(tls: TLSSocket): void;
  /** The client did not start with a TLS record: these are its first bytes, the rest follows on the socket. */
  plain(first: Buffer): void;
  /** The handshake failed (the reason from the TLS library). */
  failed(reason: string): void;
}

const HANDSHAKE = 0x16;
/** The bytes of a record header per record a hello can span, above the hello itself. */
const HELLO_BUFFER = MAX_HELLO_BYTES + 1024;

/** A Duplex that reads `first`, then whatever `socket` sends, and writes to `socket`. */
function replay(socket: Socket, first: Buffer): Duplex {
  const duplex = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, _encoding, callback) {
      if (socket.destroyed) callback();
      else socket.write(chunk, () => callback());
    },
    final(callback) {
      socket.end();
      callback();
    },
    destroy(err, callback) {
      socket.destroy();
      callback(err);
    },
  });
  duplex.push(first);
  socket.on("data", (chunk: Buffer) => {
    if (!duplex.push(chunk)) socket.pause();
  });
  socket.on("end", () => duplex.push(null));
  socket.on("close", () => duplex.destroy());
  return duplex;
}

export function acceptTls(socket: Socket, context: SecureContext, handlers: TlsHandlers): void {
  const input = new InputBuffer(HELLO_BUFFER);
  const onData = (chunk: Buffer) => {
    if (!input.push(chunk)) {
      socket.off("data", onData);
      handlers.hello({ error: "ClientHello too long" });
      socket.destroy();
      return;
    }
    const bytes = input.view();
    // An SSL 2.0-format hello (old scanners): no JA4 to be had, but the TLS library still answers it.
    if ((bytes[0]! & 0x80) !== 0 && bytes.length >= 3 && bytes[2] === 1) {
      socket.off("data", onData);
      socket.pause();
      handlers.hello({ error: "SSL 2.0 ClientHello" });
      startTls(socket, Buffer.from(bytes), context, handlers);
      return;
    }
    if (bytes[0] !== HANDSHAKE) {
      socket.off("data", onData);
      handlers.plain(Buffer.from(bytes));
      return;
    }
    const result = readClientHello(bytes);
    if (result.kind === "more") return;
    socket.off("data", onData);
    socket.pause();
    handlers.hello(result.kind === "hello" ? { hello: result.hello } : { error: result.reason });
    // Even a hello this parser refuses goes to the TLS library, which answers with the alert a real server sends.
    startTls(socket, Buffer.from(bytes), context, handlers);
  };
  socket.on("data", onData);
}

function startTls(socket: Socket, first: Buffer, context: SecureContext, handlers: TlsHandlers): void {
  let tls: TLSSocket;
  try {
    tls = new TLSSocket(replay(socket, first) as unknown as Socket, { isServer: true, secureContext: context, ALPNProtocols: ["http/1.1"] } as ConstructorParameters<typeof TLSSocket>[1]);
  } catch (err) {
    handlers.failed((err as Error).message);
    socket.destroy();
    return;
  }
  let secured = false;
  tls.on("secure", () => {
    secured = true;
    handlers.secure(tls);
  });
  tls.on("error", (err: Error) => {
    if (!secured) handlers.failed(err.message);
    socket.destroy();
  });
  tls.on("close", () => socket.destroy());
}
