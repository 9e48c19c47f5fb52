/**
 * What a command handler sees: its connection (Client), the server-wide facts, the state of the
 * attacker's address, and the effects it may have outside (events, captured files), which the
 * socket layer provides so that every handler stays free of sockets and files.
 */
import type { Reply } from "./resp.ts";
import type { AddressState } from "./state.ts";

export interface ServerFacts {
  version: string;
  /** INFO's `os` line, e.g. "Linux 6.1.0-18-amd64 x86_64". */
  os: string;
  port: number;
  /** Empty: the default user needs no password (a default, exposed Redis). */
  password: string;
  processId: number;
  runId: string;
  buildId: string;
  replId: string;
  /** When the fake server "started", unix ms (earlier than the process). */
  startedAt: number;
  /** Totals since that start, for INFO stats. */
  totals: { connections: number; commands: number };
  connectedClients(): number;
}

/** One connection, as CLIENT LIST shows it. */
export interface Client {
  id: number;
  addr: string;
  laddr: string;
  fd: number;
  createdAt: number;
  lastInteraction: number;
  resp: 2 | 3;
  db: number;
  name: string;
  user: string;
  authenticated: boolean;
  libName: string;
  libVer: string;
  /** Inside MULTI: the commands queued, their bytes, and whether one was refused (EXECABORT). */
  multi: { queue: Buffer[][]; bytes: number; failed: boolean } | null;
  lastCommand: string;
}

export interface Capture {
  shasum: string;
  /** Where the pot keeps the file for the node (`outbox/<sha256>`); null when it was not kept. */
  outfile: string | null;
  size: number;
}

export interface Effects {
  /** Emits `redis.<name>` on the connection's session. */
  event(name: string, fields: Record<string, unknown>): void;
  /** Keeps bytes as an artifact for Core; never written anywhere else, never run. */
  capture(bytes: Buffer, meta: Record<string, string | number | boolean | null>): Capture;
}

export interface Ctx {
  client: Client;
  server: ServerFacts;
  state: AddressState;
  effects: Effects;
  now: () => number;
}

/** `close`: the connection ends once the reply (if any) is written. */
export interface Outcome {
  reply: Reply | null;
  close?: boolean;
}

export type Handler = (ctx: Ctx, args: Buffer[]) => Reply | Outcome;

export const text = (b: Buffer | undefined): string => (b ? b.toString("latin1") : "");
export const upper = (b: Buffer | undefined): string => text(b).toUpperCase();

/**
 * An argument as Redis's error messages print it (`'%.128s'`): raw bytes up to the first NUL, at
 * most `max` of them. The encoder turns \r and \n into spaces, as Redis does.
 */
export function asPrinted(b: Buffer, max = 128): string {
  const nul = b.indexOf(0);
  return b.toString("latin1", 0, Math.min(nul === -1 ? b.length : nul, max));
}

/** Redis's version test for the lines and messages 7.2 changed. */
export function atLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split(".").map(Number);
  return a > major || (a === major && b >= minor);
}
