/**
 * A fake Core for node agent tests: the control channel (registration, commands, everything the
 * node reports) and the event socket (EventStreamHello, EventAck after "commit"), on port 0,
 * each stoppable and restartable on the same port to play a Core that goes away.
 */
import type { Socket, TCPSocketListener } from "bun";
import { LineSplitter } from "../../src/protocol/framing";
import { parseWithIds, stringify } from "../../src/protocol/json";

type Msg = { kind: string; payload: any };

class Inbox<T> {
  private items: T[] = [];
  private waiters: { match: (t: T) => boolean; resolve: (t: T) => void }[] = [];
  readonly all: T[] = [];

  push(item: T): void {
    this.all.push(item);
    const i = this.waiters.findIndex((w) => w.match(item));
    if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(item);
    else this.items.push(item);
  }

  /** Forgets what has not been consumed yet: later waits see only what arrives from now on. */
  clear(): void {
    this.items = [];
  }

  /** The oldest unconsumed item that matches, waiting for one if needed. */
  take(match: (t: T) => boolean = () => true): Promise<T> {
    const i = this.items.findIndex(match);
    if (i >= 0) return Promise.resolve(this.items.splice(i, 1)[0]!);
    const { promise, resolve } = Promise.withResolvers<T>();
    this.waiters.push({ match, resolve });
    return promise;
  }
}

export interface FakeCoreOptions {
  /** Refuse registrations with this message. */
  refuse?: string;
  /** Hold events without acknowledging them. */
  noAcks?: boolean;
}

export class FakeCore {
  readonly messages = new Inbox<Msg>();
  /** Every event line received on the event socket, parsed, in arrival order. */
  readonly events: any[] = [];
  readonly hellos: any[] = [];
  controlPort = 0;
  eventPort = 0;
  private control: TCPSocketListener<any> | null = null;
  private eventSocket: TCPSocketListener<any> | null = null;
  private nodeSocket: Socket<any> | null = null;
  private eventWaiters: { n: number; resolve: () => void }[] = [];
  private commandSeq = 0;
  registrations = 0;

  constructor(private readonly opts: FakeCoreOptions = {}) {}

  static start(opts: FakeCoreOptions = {}): FakeCore {
    const core = new FakeCore(opts);
    core.startControl();
    core.startEvents();
    return core;
  }

  get core(): string {
    return `127.0.0.1:${this.controlPort}`;
  }
  get eventsAddress(): string {
    return `127.0.0.1:${this.eventPort}`;
  }

  startControl(): void {
    const splitters = new WeakMap<object, LineSplitter>();
    this.control = Bun.listen<undefined>({
      hostname: "127.0.0.1",
      port: this.controlPort,
      socket: {
        open: (s) => void splitters.set(s, new LineSplitter()),
        data: (s, chunk) =>
          splitters.get(s)!.push(chunk, {
            line: (text) => this.onControl(s, text),
            oversized: () => {},
          }),
        close: (s) => {
          if (this.nodeSocket === s) this.nodeSocket = null;
          this.messages.push({ kind: "#closed", payload: null });
        },
      },
    });
    this.controlPort = this.control.port;
  }

  startEvents(): void {
    type C = { splitter: LineSplitter; hello: boolean; lines: number };
    this.eventSocket = Bun.listen<C>({
      hostname: "127.0.0.1",
      port: this.eventPort,
      socket: {
        open: (s) => void (s.data = { splitter: new LineSplitter(), hello: false, lines: 0 }),
        data: (s, chunk) => {
          const c = s.data;
          const before = c.lines;
          c.splitter.push(chunk, {
            line: (text) => {
              const v = parseWithIds(text) as any;
              if (!c.hello && v?.message?.EventStreamHello) {
                c.hello = true;
                this.hellos.push(v.message.EventStreamHello);
                return;
              }
              c.lines++;
              this.events.push(v);
            },
            oversized: () => {},
          });
          // Committed at once: acknowledge what this chunk brought.
          if (c.lines > before && !this.opts.noAcks) s.write(stringify({ version: 2, message: { EventAck: { seq: c.lines } } }) + "\n");
          this.eventWaiters = this.eventWaiters.filter((w) => (this.events.length >= w.n ? (w.resolve(), false) : true));
        },
      },
    });
    this.eventPort = this.eventSocket.port;
  }

  stopControl(): void {
    this.control?.stop(true);
    this.control = null;
    this.nodeSocket = null;
  }

  stopEvents(): void {
    this.eventSocket?.stop(true);
    this.eventSocket = null;
  }

  stop(): void {
    this.stopControl();
    this.stopEvents();
  }

  [Symbol.dispose](): void {
    this.stop();
  }

  private onControl(s: Socket<undefined>, text: string): void {
    const v = parseWithIds(text) as any;
    const m = v.message;
    const kind = typeof m === "string" ? m : Object.keys(m)[0]!;
    const payload = typeof m === "string" ? null : m[kind];
    if (kind === "NodeRegistration") {
      this.registrations++;
      const accepted = !this.opts.refuse;
      if (accepted) this.nodeSocket = s;
      s.write(stringify({ version: 2, message: { RegistrationAck: { node_id: payload.node_id, accepted, message: this.opts.refuse ?? "registered" } } }) + "\n");
    }
    this.messages.push({ kind, payload });
  }

  /** The next message of a kind from the node (consumed), optionally matching. */
  async next(kind: string, match: (payload: any) => boolean = () => true): Promise<any> {
    return (await this.messages.take((m) => m.kind === kind && match(m.payload))).payload;
  }

  /** The next PotStatusUpdate of a pot with one of the given statuses. */
  status(potId: string, ...statuses: string[]): Promise<any> {
    return this.next("PotStatusUpdate", (p) => p.pot_id === potId && (statuses.length === 0 || statuses.includes(p.status)));
  }

  /** Sends a raw NodeCommand line (for malformed commands). */
  sendRaw(obj: unknown): void {
    this.nodeSocket!.write(stringify(obj) + "\n");
  }

  /** Sends a command to the registered node and waits for its CommandResult. */
  async command(nodeId: bigint, command: unknown): Promise<{ command_id: string; ok: boolean; message: string; data?: any }> {
    const command_id = `cmd-${++this.commandSeq}`;
    if (!this.nodeSocket) throw new Error("no node is registered");
    this.nodeSocket.write(stringify({ version: 2, message: { NodeCommand: { node_id: nodeId, command, command_id } } }) + "\n");
    return this.next("CommandResult", (r) => r.command_id === command_id);
  }

  /** Resolves once at least `n` events arrived. */
  waitEvents(n: number): Promise<void> {
    if (this.events.length >= n) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.eventWaiters.push({ n, resolve });
    return promise;
  }
}
