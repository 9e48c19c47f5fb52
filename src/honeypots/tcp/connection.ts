/**
 * One connection to the catch-all: keep the first `firstBytes` bytes the client sends and record
 * them once (tcp.payload, with the protocol they look like), send the port's banner when the
 * client has said nothing for `waitMs` or as soon as it speaks, and count, then drop, everything
 * after the capture: a flood costs the pot its bandwidth, never its memory.
 */
import type { Socket } from "node:net";
import { InputBuffer, type PotSession, printable } from "../shared/session.ts";
import { guessProtocol } from "./guess.ts";

export interface ConnectionOptions {
  firstBytes: number;
  waitMs: number;
  /** What the port says first, or null for a port that only listens. */
  banner: Buffer | null;
}

/**
 * Silence after the client's last bytes before they are recorded. One message may come in
 * several segments (a ClientHello with post-quantum key shares spans two) a round trip apart at
 * most; a client quiet for this long waits for an answer that will not come.
 */
export const SETTLE_MS = 2000;

export function serveConnection(socket: Socket, session: PotSession, opts: ConnectionOptions, onClose: () => void): void {
  let capture = new InputBuffer(opts.firstBytes);
  let received = 0;
  let truncated = false;
  let recorded = false;
  let bannerSent = false;
  let settle: ReturnType<typeof setTimeout> | null = null;
  let bannerTimer: ReturnType<typeof setTimeout> | null = null;

  const sendBanner = () => {
    if (bannerTimer) clearTimeout(bannerTimer);
    bannerTimer = null;
    if (bannerSent || !opts.banner || socket.destroyed) return;
    bannerSent = true;
    socket.write(opts.banner);
  };
  // With wait_ms 0 the banner goes out at once, as a server that speaks first sends it.
  if (opts.banner && opts.waitMs === 0) sendBanner();
  else if (opts.banner) bannerTimer = setTimeout(sendBanner, opts.waitMs);

  const record = () => {
    if (settle) clearTimeout(settle);
    settle = null;
    if (recorded || capture.length === 0) return;
    recorded = true;
    const bytes = capture.view();
    const guess = guessProtocol(bytes);
    session.emit("payload", {
      payload_hex: bytes.toString("hex"),
      payload_printable: printable(bytes),
      bytes: bytes.length,
      truncated,
      protocol_guess: guess.protocol,
      ...guess.fields,
    });
    // Let go of the bytes: the connection may stay open for minutes after.
    capture = new InputBuffer(0);
  };

  socket.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (!recorded) {
      const room = opts.firstBytes - capture.length;
      if (room > 0) capture.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      if (chunk.length > room) {
        truncated = true;
        record();
      } else {
        if (settle) clearTimeout(settle);
        settle = setTimeout(record, SETTLE_MS);
      }
    }
    // A client that speaks first gets the banner now: a server that greets would have sent it already.
    sendBanner();
  });
  socket.on("end", record);
  socket.once("close", () => {
    if (bannerTimer) clearTimeout(bannerTimer);
    record();
    session.close({ bytes_received: received, banner_sent: bannerSent });
    onClose();
  });
}
