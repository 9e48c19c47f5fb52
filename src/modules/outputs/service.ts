/**
 * The outputs of this Core (docs/outputs.md): those of the config file and those defined over
 * REST (kept in the database), each a StoreReader with its own position feeding its sink.
 * Commits wake them; nothing on the ingest path waits for them. Several instances run every
 * output, and the one that holds its lease delivers (reader.ts); a definition changed over
 * REST on one reaches the others by `reload` (src/cluster/reader-sync.ts).
 */
import { ConfigError } from "../../config";
import type { OutputStorage, StoredDefinition } from "../../db/output-storage";
import type { Logger } from "../../log";
import { exampleEvent } from "../../protocol/records";
import type { OutEvent } from "./event";
import type { OutputDefinition } from "./model";
import { parseOutput } from "./model";
import { keepSecrets, redactDefinition, textRedactor } from "./redact";
import { StoreReader, type EventSource, type ReaderState, type ReaderStatus } from "./reader";
import { selector } from "./select";
import { withTimeout, type Sink } from "./sink";
import { createSink } from "./sinks";

export type Origin = "config" | "api";

export interface OutputStatus extends Omit<ReaderStatus, "state"> {
  /** A reader's state, or paused (over REST: it keeps its position and delivers nothing until resumed). */
  state: ReaderState | "paused";
  name: string;
  type: OutputDefinition["type"];
  origin: Origin;
  /** Committed events after this output's position (those it does not take included). */
  lag: number;
}

/** An output of this Core: delivering (a reader and its sink), or paused (neither; its position as last read). */
interface Running {
  def: OutputDefinition;
  origin: Origin;
  /** The stored row's creation time: an edit keeps it, a removal and an add under the same name do not. */
  createdAt: number;
  run: { sink: Sink; reader: StoreReader } | null;
  /** While paused: the stored position and the counts of the reader it had. */
  paused: ReaderStatus | null;
}

export type OutputChange = { ok: true } | { ok: false; status: 400 | 404 | 409; code: string; message: string };

/** What a test delivery did (POST /api/v1/outputs/{name}/test). */
export interface TestResult {
  name: string;
  delivered: boolean;
  /** Why it was not delivered, credentials hidden as in `last_error`. */
  error: string | null;
  duration_ms: number;
}

/** Longest a test delivery may take beyond the output's own timeout (a syslog or file output has none). */
const TEST_TIMEOUT_MS = 15_000;

/**
 * The event a test sends: the REST example, marked `data.test: true`, id 0 (no stored event
 * has it), stamped now, from a documentation address (203.0.113.0/24).
 */
export function testEvent(): OutEvent {
  const e = exampleEvent;
  return {
    id: 0,
    ts: Date.now(),
    node_id: e.node_id,
    pot_id: e.pot_id,
    pot_type: e.pot_type,
    event_type: e.event_type,
    src_ip: e.src_ip,
    data: { ...e.data, test: true, message: "HoneyBee test event: this output works (sent by POST /api/v1/outputs/{name}/test, not by an attacker)" },
    geo: e.geo,
  };
}

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
      const stored = new Map<string, { def: OutputDefinition; row: StoredDefinition }>();
      const carried = new Map<string, OutputStatus>();
      for (const row of await this.deps.store.outputs()) {
        const p = parseOutput(row.definition);
        if (!p.ok) {
          if (!this.warned.has(row.name)) this.deps.logger.error({ output: row.name, err: p.error }, "stored output is not valid; not started");
          this.warned.add(row.name);
          continue;
        }
        stored.set(p.value.name, { def: p.value, row });
      }
      for (const [name, r] of this.running) {
        const now = stored.get(name);
        if (r.origin !== "api") continue;
        if (now && now.row.createdAt === r.createdAt && now.row.paused === (r.paused !== null) && JSON.stringify(now.def) === JSON.stringify(r.def)) {
          // The position of a paused output moves only when the instance that delivered it saved it.
          if (r.paused) r.paused.position = (await this.deps.store.position(`output:${name}`)) ?? r.paused.position;
          continue;
        }
        // Edited or paused elsewhere: the position stays (saved, should this instance deliver it),
        // and the counts go on; it is listed until started anew. Removed or made anew: its
        // position went with it.
        const edited = now?.row.createdAt === r.createdAt;
        if (edited) carried.set(name, this.statusOf(r));
        await this.halt(r, edited);
        if (!edited) this.running.delete(name);
      }
      for (const { def, row } of stored.values()) {
        const r = this.running.get(def.name);
        if (r?.origin === "config") {
          if (!this.warned.has(def.name)) this.deps.logger.warn({ output: def.name }, "an output of the config file has the name of one defined over REST; the config file's is used");
          this.warned.add(def.name);
          continue;
        }
        if (!r || carried.has(def.name)) await this.run(def, "api", row.createdAt, row.paused, carried.get(def.name));
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
    for (const r of this.running.values()) r.run?.reader.notify();
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
      // The stored creation time: the instances that reload it see the same one.
      const row = (await this.deps.store.outputs()).find((o) => o.name === name);
      await this.run(def, "api", row?.createdAt ?? 0, false);
      this.deps.logger.info({ output: name, type: def.type }, "output added");
      this.onChange();
      return { ok: true } as const;
    });
  }

  /**
   * Replaces the definition of an output defined over REST; it keeps its position and whether
   * it is paused. A credential left out or sent as `(set)` (as GET shows it) keeps the stored one.
   */
  update(name: string, raw: unknown): Promise<OutputChange> {
    return this.serially(async () => {
      const r = this.changeable(name, "edit");
      if (!r.ok) return r.refusal;
      const given = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
      if (given && given.name !== undefined && given.name !== name) return { ok: false, status: 400, code: "bad_request", message: `invalid ${String(given.type)} output: /name is ${name} (an output cannot be renamed; add one under the new name)` } as const;
      const p = parseOutput(given ? keepSecrets({ ...given, name }, r.running.def) : raw);
      if (!p.ok) return { ok: false, status: 400, code: "bad_request", message: p.error } as const;
      if (!(await this.deps.store.updateOutput(name, p.value.type, p.value))) return gone(name);
      const before = this.statusOf(r.running);
      await this.halt(r.running, true);
      await this.run(p.value, "api", r.running.createdAt, r.running.paused !== null, before);
      this.deps.logger.info({ output: name, type: p.value.type }, "output changed");
      this.onChange();
      return { ok: true } as const;
    });
  }

  /** Pauses (it stops delivering and keeps its position, across restarts) or resumes an output defined over REST. */
  pause(name: string, paused: boolean): Promise<OutputChange> {
    return this.serially(async () => {
      const r = this.changeable(name, paused ? "pause" : "resume");
      if (!r.ok) return r.refusal;
      if ((r.running.paused !== null) === paused) return { ok: true } as const;
      if (!(await this.deps.store.pauseOutput(name, paused))) return gone(name);
      const before = this.statusOf(r.running);
      await this.halt(r.running, true);
      await this.run(r.running.def, "api", r.running.createdAt, paused, before);
      this.deps.logger.info({ output: name }, paused ? "output paused" : "output resumed");
      this.onChange();
      return { ok: true } as const;
    });
  }

  /** Sends one test event (testEvent) through the output now, on a connection of its own, whether it is paused or not. */
  async test(name: string): Promise<TestResult | null> {
    const r = this.running.get(name);
    if (!r) return null;
    const started = performance.now();
    const sink = createSink(r.def);
    let error: string | null = null;
    try {
      const timeout = ("timeout_ms" in r.def ? (r.def.timeout_ms ?? 10_000) : 0) + TEST_TIMEOUT_MS;
      await withTimeout(sink.send([testEvent()]), timeout, `no delivery within ${timeout} ms`);
    } catch (e) {
      error = textRedactor(r.def)(e instanceof Error ? e.message : String(e));
    } finally {
      await sink.close().catch(() => {});
    }
    this.deps.logger.info({ output: name, delivered: error === null, err: error ?? undefined }, "test event sent");
    return { name, delivered: error === null, error, duration_ms: Math.round(performance.now() - started) };
  }

  /** The output, when REST may change it: it exists and is not of the config file. */
  private changeable(name: string, what: string): { ok: true; running: Running } | { ok: false; refusal: OutputChange } {
    const r = this.running.get(name);
    if (!r) return { ok: false, refusal: gone(name) };
    if (r.origin === "config") return { ok: false, refusal: { ok: false, status: 409, code: "conflict", message: `output ${name} is defined in the config file; ${what} it there` } };
    return { ok: true, running: r };
  }

  remove(name: string): Promise<OutputChange> {
    return this.serially(async () => {
      const r = this.running.get(name);
      if (!r) return gone(name);
      if (r.origin === "config") return { ok: false, status: 409, code: "conflict", message: `output ${name} is defined in the config file; remove it there` } as const;
      this.running.delete(name);
      await this.halt(r, false);
      await this.deps.store.deleteOutput(name);
      this.deps.logger.info({ output: name }, "output removed");
      this.onChange();
      return { ok: true } as const;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.changes;
    await Promise.all([...this.running.values()].map((r) => this.halt(r, true)));
    this.running.clear();
  }

  private statusOf(r: Running): OutputStatus {
    const s: Omit<OutputStatus, "name" | "type" | "origin" | "lag"> = r.paused ? { ...r.paused, state: "paused" } : r.run!.reader.status();
    return { name: r.def.name, type: r.def.type, origin: r.origin, ...s, lag: Math.max(0, this.lastCommitted - s.position) };
  }

  /** Stops delivering; `save` keeps the position (false: the output is gone, its position with it). */
  private async halt(r: Running, save: boolean): Promise<void> {
    if (r.run) await r.run.reader.stop(() => r.run!.sink.close(), save);
  }

  /** Starts an output (or lists it paused); `before` is the status it had, whose counts a paused one shows. */
  private async run(def: OutputDefinition, origin: Origin, createdAt = 0, paused = false, before?: Omit<OutputStatus, "state"> | null): Promise<void> {
    // Pinned now, so what is committed from here on is delivered, whichever instance delivers it.
    await StoreReader.pin(this.deps.store, this.deps.source, `output:${def.name}`, def.from ?? "latest");
    if (paused) {
      const position = (await this.deps.store.position(`output:${def.name}`)) ?? 0;
      const c = before;
      const paused = { state: "stopped", position, delivered: c?.delivered ?? 0, failed: c?.failed ?? 0, dropped: c?.dropped ?? 0, last_error: null, last_delivery_at: c?.last_delivery_at ?? null } as const;
      this.running.set(def.name, { def, origin, createdAt, run: null, paused });
      return;
    }
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
      counts: before ?? undefined,
      logger: this.deps.logger.child({ output: def.name }),
    });
    this.running.set(def.name, { def, origin, createdAt, run: { sink, reader }, paused: null });
    reader.start();
  }
}

const gone = (name: string) => ({ ok: false, status: 404, code: "not_found", message: `output ${name} does not exist` }) as const;
