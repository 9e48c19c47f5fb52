/**
 * One TCP connection to the device, as adbd's transport handles it (adb.cpp handle_packet):
 * CNXN in, our CNXN out (protocol version and maxdata the lesser of both sides'), then streams
 * opened by the client with OPEN, fed with WRTE, each WRTE answered with OKAY, closed with CLSE.
 * Our own WRTEs on a stream wait for the peer's OKAY of the previous one (adb's flow control).
 * The device never asks for AUTH (a device with `ro.adb.secure=0`); an AUTH the client sends
 * anyway is recorded and accepted. STLS is not offered, and ignored.
 */
import type { Socket } from "node:net";
import type { PotSession } from "../shared/session.ts";
import { AUTH_RSAPUBLICKEY, AUTH_SIGNATURE, type Command, cString, encode, MAX_PAYLOAD, type Message, MessageDecoder, parseIdentity, ProtocolError, publicKeyInfo, VERSION_SKIP_CHECKSUM } from "./protocol.ts";
import { openService } from "./services.ts";
import type { DeviceContext, Service, StreamIO } from "./stream.ts";

/** Streams open at once on one connection; adb opens one per command, so a few suffice. */
const MAX_STREAMS = 64;
/** Output queued on a stream whose peer does not OKAY it; past this the peer is broken. */
const STREAM_QUEUE_MAX = 4 * 1024 * 1024;
/** Bytes waiting in the socket before we stop reading (a peer that sends but never reads). */
const SOCKET_HIGH_WATER = 1024 * 1024;
/** A peer's maxdata below this is raised to it, so our WRTEs always carry something. */
const MIN_MAXDATA = 256;
/** Characters of a banner or key kept in events. */
const TEXT_MAX = 4096;

class Stream implements StreamIO {
  private queue: Buffer[] = [];
  private queued = 0;
  private inFlight = false;
  private closing = false;
  service: Service | null = null;

  constructor(
    private readonly conn: AdbConnection,
    readonly localId: number,
    readonly remoteId: number,
  ) {}

  write(data: Uint8Array | string): void {
    if (this.closing) return;
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
    if (bytes.length === 0) return;
    this.queue.push(bytes);
    this.queued += bytes.length;
    if (this.queued > STREAM_QUEUE_MAX) {
      this.conn.drop();
      return;
    }
    this.pump();
  }

  close(): void {
    this.closing = true;
    this.pump();
  }

  /** The peer's OKAY for our last WRTE. */
  ready(): void {
    this.inFlight = false;
    this.pump();
  }

  private pump(): void {
    if (this.inFlight || !this.conn.has(this)) return;
    if (this.queued > 0) {
      // Coalesced: many small writes (a terminal's echo) go out as one WRTE.
      const all = this.queue.length === 1 ? (this.queue[0] as Buffer) : Buffer.concat(this.queue);
      const chunk = all.subarray(0, this.conn.maxData);
      const rest = all.subarray(chunk.length);
      this.queue = rest.length ? [rest] : [];
      this.queued = rest.length;
      this.inFlight = true;
      this.conn.send("WRTE", this.localId, this.remoteId, chunk);
      return;
    }
    if (this.closing) {
      this.conn.send("CLSE", this.localId, this.remoteId);
      this.conn.forget(this);
    }
  }
}

export class AdbConnection {
  private readonly decoder = new MessageDecoder(MAX_PAYLOAD);
  private readonly streams = new Map<number, Stream>();
  private online = false;
  private identified = false;
  private nextId = 1;
  private version = VERSION_SKIP_CHECKSUM;
  maxData = MAX_PAYLOAD;
  private readonly ctx: DeviceContext;

  constructor(
    private readonly socket: Socket,
    private readonly session: PotSession,
    private readonly banner: string,
    device: Omit<DeviceContext, "session" | "hangUp">,
  ) {
    this.ctx = { ...device, session, hangUp: () => this.socket.end() };
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("drain", () => socket.resume());
    socket.on("close", () => this.closed());
  }

  has(stream: Stream): boolean {
    return this.streams.get(stream.localId) === stream;
  }

  forget(stream: Stream): void {
    if (this.has(stream)) this.streams.delete(stream.localId);
  }

  send(command: Command, arg0: number, arg1: number, data?: Uint8Array): void {
    if (this.socket.destroyed) return;
    // Version 0x01000000 peers (old adb, nmap's probe) check data_check: they get the byte sum.
    const ok = this.socket.write(encode(command, arg0, arg1, data, this.version < VERSION_SKIP_CHECKSUM));
    if (!ok && this.socket.writableLength > SOCKET_HIGH_WATER) this.socket.pause();
  }

  /** A peer that breaks the protocol's rules loses its connection. */
  drop(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    let messages: Message[];
    try {
      messages = this.decoder.push(chunk);
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
      // adbd drops a transport whose framing breaks; a scanner's probe ends here.
      this.socket.destroy();
      return;
    }
    for (const message of messages) {
      if (this.socket.destroyed) return;
      this.handle(message);
    }
  }

  private handle(m: Message): void {
    switch (m.command) {
      case "CNXN":
        return this.connect(m);
      case "AUTH":
        return this.auth(m);
      case "OPEN":
        return this.open(m);
      case "WRTE": {
        const stream = this.stream(m);
        if (!stream) return;
        stream.service?.data(m.data);
        // The service may have closed the stream meanwhile; adbd acknowledges all the same.
        this.send("OKAY", stream.localId, stream.remoteId);
        return;
      }
      case "OKAY":
        this.stream(m)?.ready();
        return;
      case "CLSE": {
        const stream = m.arg1 === 0 ? undefined : this.streams.get(m.arg1);
        if (!stream) return;
        this.streams.delete(stream.localId);
        stream.service?.closed();
        return;
      }
      default:
        // STLS (never offered) and SYNC (obsolete) are ignored, as adbd ignores the unexpected.
        return;
    }
  }

  private stream(m: Message): Stream | undefined {
    if (!this.online || m.arg0 === 0 || m.arg1 === 0) return undefined;
    const stream = this.streams.get(m.arg1);
    return stream && stream.remoteId === m.arg0 ? stream : undefined;
  }

  private connect(m: Message): void {
    this.version = Math.min(m.arg0, VERSION_SKIP_CHECKSUM);
    this.maxData = Math.max(MIN_MAXDATA, Math.min(m.arg1, MAX_PAYLOAD));
    if (!this.identified) {
      this.identified = true;
      const text = cString(m.data);
      const identity = parseIdentity(text);
      this.session.emit("client.connect", {
        banner: text.slice(0, TEXT_MAX),
        system_type: identity.systemType.slice(0, 64),
        serial: identity.serial.slice(0, 256),
        features: (identity.props.features ?? "").slice(0, TEXT_MAX),
        version: `0x${(m.arg0 >>> 0).toString(16).padStart(8, "0")}`,
        maxdata: m.arg1,
      });
    }
    // A CNXN restarts the transport: streams of the previous one are gone.
    for (const stream of this.streams.values()) stream.service?.closed();
    this.streams.clear();
    this.online = true;
    this.send("CNXN", this.version, this.maxData, Buffer.from(this.banner, "utf8"));
  }

  private auth(m: Message): void {
    if (m.arg0 === AUTH_RSAPUBLICKEY) {
      const info = publicKeyInfo(m.data);
      this.session.emit("client.auth", { auth_type: "publickey", fingerprint: info.fingerprint, key: info.key.slice(0, TEXT_MAX), comment: info.comment.slice(0, 256) });
    } else if (m.arg0 === AUTH_SIGNATURE) {
      this.session.emit("client.auth", { auth_type: "signature", size: m.data.length });
    } else {
      return;
    }
    // Accepted: as if the user had ticked "Always allow from this computer".
    this.online = true;
    this.send("CNXN", this.version, this.maxData, Buffer.from(this.banner, "utf8"));
  }

  private open(m: Message): void {
    if (!this.online || m.arg0 === 0) return;
    // arg1 is the send buffer of delayed acks, a feature we do not announce: adbd refuses such an OPEN.
    if (m.arg1 !== 0 || this.streams.size >= MAX_STREAMS) {
      this.send("CLSE", 0, m.arg0);
      return;
    }
    // adbd reads the name as a C string once stood; trailing NULs are not part of it.
    let end = m.data.length;
    while (end > 0 && m.data[end - 1] === 0) end--;
    const start = openService(m.data.subarray(0, end).toString("utf8"), this.ctx);
    if (!start) {
      this.send("CLSE", 0, m.arg0);
      return;
    }
    const stream = new Stream(this, this.nextId++, m.arg0);
    this.streams.set(stream.localId, stream);
    this.send("OKAY", stream.localId, stream.remoteId);
    stream.service = start(stream);
  }

  private closed(): void {
    for (const stream of this.streams.values()) stream.service?.closed();
    this.streams.clear();
    this.session.close();
  }
}
