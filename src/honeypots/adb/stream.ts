/**
 * What a service sees of its adb stream (one OPEN on the transport), and what it shares with the
 * other streams of the same connection: the device's state and the session's recorder.
 */
import type { PotSession } from "../shared/session.ts";
import type { Outbox } from "../shared/outbox.ts";
import type { Product } from "./device.ts";
import type { FakeFs } from "./filesystem.ts";

export interface StreamIO {
  /** Queued and sent as WRTEs, one at a time, each after the peer's OKAY for the previous one. */
  write(data: Uint8Array | string): void;
  /** Closes the stream (CLSE) once everything written has been taken. */
  close(): void;
}

export interface Service {
  /** A WRTE's data. */
  data(bytes: Buffer): void;
  /** The stream is gone (the peer's CLSE, or the connection ended). */
  closed(): void;
}

export interface DeviceContext {
  session: PotSession;
  fs: FakeFs;
  props: Map<string, string>;
  product: Product;
  outbox: Outbox;
  uploadMax: number;
  /** Drops the whole connection, as a device going down for a reboot does. */
  hangUp(): void;
}

/** Characters of one command line kept in its event: with JSON's escapes it stays far below the relay's 1 MiB line. */
export const INPUT_MAX = 64 * 1024;

/** Records adb.command.input: a shell line, or a service asked for by name. */
export function recordInput(session: PotSession, input: string, service: string, extra: Record<string, unknown> = {}): void {
  const cut = input.length > INPUT_MAX;
  session.emit("command.input", { input: cut ? input.slice(0, INPUT_MAX) : input, service: service.slice(0, 256), ...(cut ? { truncated: true } : {}), ...extra });
}
