/**
 * The outputs of this Core (docs/outputs.md): those of the config file and those defined over
 * REST (kept in the database), each a StoreReader with its own position feeding its sink.
 * Commits wake them; nothing on the ingest path waits for them. Several instances run every
 * output, and the one that holds its lease delivers (reader.ts); a definition changed over
 * REST on one reaches the others by `reload` (src/cluster/reader-sync.ts).
 */
import { ConfigError } from "../../config";
import type { OutputStorage } from "../../db/output-storage";
import type { Logger } from "../../log";
import type { OutputDefinition } from "./model";
import { parseOutput } from "./model";
import { redactDefinition, textRedactor } from "./redact";
import { StoreReader, type EventSource, type ReaderStatus } from "./reader";
import { selector } from "./select";
import type { Sink } from "./sink";
import { createSink } from "./sinks";

export type Origin = "config" | "api";

export interface OutputStatus extends ReaderStatus {
  name: string;
  type: OutputDefinition["type"];
  origin: Origin;
  /** Committed events after this output's position (those it does not take included). */
  lag: number;
}

interface Running {
  def: OutputDefinition;
  origin: Origin;
  sink: Sink;
  reader: StoreReader;
}

export type OutputChange = { ok: true } | { ok: false; status: 400 | 404 | 409; code: string; message: string };

export class Outputs {
  private readonly running = new Map<string, Running>();
  private lastCommitted = 0;
  /** Changes (add, remove, reload) one at a time: a reload must not start an output an add is starting. */
  private changes: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** Stored outputs that are not valid or named like one of the config file: warned of once. */
  private readonly warned = new Set<string>();
  /** Told after a definition was added or removed here (the other instances reload). */
  onChange: () => void = () => {};

  constructor(
    private readonly deps: { store: OutputStorage; source: EventSource; logger: Logger },
  ) {}

  /** Starts the outputs of the config file and the database; a bad definition in the config stops start-up. */
  async start(fromConfig: unknown[]): Promise<void> {
    const defs: OutputDefinition[] = [];
    for (const raw of fromConfig) {
      const p = parseOutput(raw);
      if (!p.ok) throw new ConfigError(`invalid value for "outputs": ${p.error} (docs/outputs.md)`);
      if (defs.some((d) => d.name === p.value.name)) throw new ConfigError(`invalid value for "outputs": two outputs are named ${JSON.stringify(p.value.name)}`);
      defs.push(p.value);
    }
    this.lastCommitted = await this.deps.source.lastId();
    for (const def of defs) await this.run(def, "config");
    await this.reload();
  }

  /** Starts the outputs defined over REST that are stored and not running, stops those no longer stored. */
  reload(): Promise<void> {
    return this.serially(async () => {
      if (this.stopped) return;
      const stored = new Map<string, OutputDefinition>();
      for (const row of await this.deps.store.outputs()) {
        const p = parseOutput(row.definition);
        if (!p.ok) {
          if (!this.warned.has(row.name)) this.deps.logger.error({ output: row.name, err: p.error }, "stored output is not valid; not started");
          this.warned.add(row.name);
          continue;
        }
        stored.set(p.value.name, p.value);
      }
      for (const [name, r] of this.running) {
        const now = stored.get(name);
        if (r.origin !== "api" || (now && JSON.stringify(now) === JSON.stringify(r.def))) continue;
        this.running.delete(name);
        // Removed (or made anew) elsewhere, its position with it.
        await r.reader.stop(() => r.sink.close(), false);
      }
      for (const def of stored.values()) {
        const r = this.running.get(def.name);
        if (r?.origin === "config") {
          if (!this.warned.has(def.name)) this.deps.logger.warn({ output: def.name }, "an output of the config file has the name of one defined over REST; the config file's is used");
          this.warned.add(def.name);
          continue;
        }
        if (!r) await this.run(def, "api");
      }
    });
  }

  private serially<T>(f: () => Promise<T>): Promise<T> {
    const p = this.changes.then(f);
    this.changes = p.catch(() => {});
    return p;
  }

  /** Events up to `lastId` are committed. */
  committed(lastId: number): void {
    this.lastCommitted = Math.max(this.lastCommitted, lastId);
    for (const r of this.running.values()) r.reader.notify();
  }

  has(name: string): boolean {
    return this.running.has(name);
  }

  list(): { definition: OutputDefinition; origin: Origin; status: OutputStatus }[] {
    return [...this.running.values()].map((r) => ({ definition: redactDefinition(r.def), origin: r.origin, status: this.statusOf(r) }));
  }

  get(name: string) {
    const r = this.running.get(name);
    return r ? { definition: redactDefinition(r.def), origin: r.origin, status: this.statusOf(r) } : null;
  }

  stats(): OutputStatus[] {
    return [...this.running.values()].map((r) => this.statusOf(r));
  }

  add(raw: unknown): Promise<OutputChange> {
    const p = parseOutput(raw);
    if (!p.ok) return Promise.resolve({ ok: false, status: 400, code: "bad_request", message: p.error });
    const def = p.value;
    const name = def.name;
    const taken: OutputChange = { ok: false, status: 409, code: "conflict", message: `an output named ${name} exists already` };
    return this.serially(async () => {
      if (this.running.has(name)) return taken;
      if (!(await this.deps.store.addOutput(name, def.type, def))) return taken;
      await this.run(def, "api");
      this.deps.logger.info({ output: name, type: def.type }, "output added");
      this.onChange();
      return { ok: true } as const;
    });
  }

  remove(name: string): Promise<OutputChange> {
    return this.serially(async () => {
      const r = this.running.get(name);
      if (!r) return { ok: false, status: 404, code: "not_found", message: `output ${name} does not exist` } as const;
      if (r.origin === "config") return { ok: false, status: 409, code: "conflict", message: `output ${name} is defined in the config file; remove it there` } as const;
      this.running.delete(name);
      await r.reader.stop(() => r.sink.close(), false);
      await this.deps.store.deleteOutput(name);
      this.deps.logger.info({ output: name }, "output removed");
      this.onChange();
      return { ok: true } as const;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.changes;
    await Promise.all([...this.running.values()].map((r) => r.reader.stop(() => r.sink.close())));
    this.running.clear();
  }

  private statusOf(r: Running): OutputStatus {
    const s = r.reader.status();
    return { name: r.def.name, type: r.def.type, origin: r.origin, ...s, lag: Math.max(0, this.lastCommitted - s.position) };
  }

  private async run(def: OutputDefinition, origin: Origin): Promise<void> {
    // Pinned now, so what is committed from here on is delivered, whichever instance delivers it.
    await StoreReader.pin(this.deps.store, this.deps.source, `output:${def.name}`, def.from ?? "latest");
    const sink = createSink(def);
    // Destinations' errors often quote the URL, credentials and all; last_error and the log show this.
    const hide = textRedactor(def);
    const reader = new StoreReader({
      key: `output:${def.name}`,
      source: this.deps.source,
      positions: this.deps.store,
      batchSize: def.batch_size ?? 100,
      retry: { minMs: def.retry?.min_backoff_ms ?? 500, maxMs: def.retry?.max_backoff_ms ?? 60_000, maxAttempts: def.retry?.max_attempts ?? 0 },
      from: def.from ?? "latest",
      select: selector(def.name, def.event_types ?? ["*"]),
      deliver: (events) =>
        sink.send(events).catch((e) => {
          throw new Error(hide(e instanceof Error ? e.message : String(e)));
        }),
      logger: this.deps.logger.child({ output: def.name }),
    });
    this.running.set(def.name, { def, origin, sink, reader });
    reader.start();
  }
}
