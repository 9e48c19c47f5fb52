/**
 * The outputs of this Core (docs/outputs.md): those of the config file and those defined over
 * REST (kept in the database), each a StoreReader with its own position feeding its sink.
 * Commits wake them; nothing on the ingest path waits for them.
 */
import { ConfigError } from "../../config";
import type { OutputStore } from "../../db/output-store";
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
  private lastCommitted: number;

  constructor(
    private readonly deps: { store: OutputStore; source: EventSource; logger: Logger },
  ) {
    this.lastCommitted = deps.source.lastId();
  }

  /** Starts the outputs of the config file and the database; a bad definition in the config stops start-up. */
  start(fromConfig: unknown[]): void {
    for (const raw of fromConfig) {
      const p = parseOutput(raw);
      if (!p.ok) throw new ConfigError(`invalid value for "outputs": ${p.error} (docs/outputs.md)`);
      if (this.running.has(p.value.name)) throw new ConfigError(`invalid value for "outputs": two outputs are named ${JSON.stringify(p.value.name)}`);
      this.run(p.value, "config");
    }
    for (const row of this.deps.store.outputs()) {
      const p = parseOutput(row.definition);
      if (!p.ok) {
        this.deps.logger.error({ output: row.name, err: p.error }, "stored output is not valid; not started");
        continue;
      }
      if (this.running.has(p.value.name)) {
        this.deps.logger.warn({ output: p.value.name }, "an output of the config file has the name of one defined over REST; the config file's is used");
        continue;
      }
      this.run(p.value, "api");
    }
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

  add(raw: unknown): OutputChange {
    const p = parseOutput(raw);
    if (!p.ok) return { ok: false, status: 400, code: "bad_request", message: p.error };
    const name = p.value.name;
    if (this.running.has(name)) return { ok: false, status: 409, code: "conflict", message: `an output named ${name} exists already` };
    if (!this.deps.store.addOutput(name, p.value.type, p.value)) return { ok: false, status: 409, code: "conflict", message: `an output named ${name} exists already` };
    this.run(p.value, "api");
    this.deps.logger.info({ output: name, type: p.value.type }, "output added");
    return { ok: true };
  }

  async remove(name: string): Promise<OutputChange> {
    const r = this.running.get(name);
    if (!r) return { ok: false, status: 404, code: "not_found", message: `output ${name} does not exist` };
    if (r.origin === "config") return { ok: false, status: 409, code: "conflict", message: `output ${name} is defined in the config file; remove it there` };
    this.running.delete(name);
    await r.reader.stop(() => r.sink.close());
    this.deps.store.deleteOutput(name);
    this.deps.logger.info({ output: name }, "output removed");
    return { ok: true };
  }

  async stop(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.reader.stop(() => r.sink.close())));
    this.running.clear();
  }

  private statusOf(r: Running): OutputStatus {
    const s = r.reader.status();
    return { name: r.def.name, type: r.def.type, origin: r.origin, ...s, lag: Math.max(0, this.lastCommitted - s.position) };
  }

  private run(def: OutputDefinition, origin: Origin): void {
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
