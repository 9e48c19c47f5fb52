/**
 * Ending a connection so that the peer reads everything written to it, then an orderly end.
 *
 * Bun's `socket.end()` closes the socket as soon as its writes are out. Whatever the peer sent
 * that was not read by then makes the kernel answer with a reset (RFC 1122, 4.2.2.13), and a
 * reset makes the peer's kernel drop what it had received and not yet read: a refusal is lost
 * exactly when the peer kept writing. Half-closed instead, the peer gets the writes and a FIN,
 * and what it still sends is read (the caller drops it) until it closes its side too.
 */
import type { Socket } from "bun";

/** How long a peer that keeps its side open (or keeps writing) is read after the FIN. */
export const LINGER_MS = 5000;

/** Call once every write is handed to the socket: FIN now, closed when the peer closes or after `lingerMs`. */
export function endLingering(socket: Socket<unknown>, lingerMs = LINGER_MS): void {
  socket.shutdown();
  // The bound: a peer that never closes or never stops writing does not hold the connection.
  setTimeout(() => socket.end(), lingerMs).unref();
}
