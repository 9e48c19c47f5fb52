/**
 * Alert rules (docs/outputs.md): a reader of the stored events with its own position, like an
 * output, whose delivery is raising alerts. An alert is stored as an event of type
 * `alert.<rule>` with the node, pot and source address of the event that raised it, so it is
 * in REST, the live feed and the log like any event, and outputs ship it: those whose
 * `event_types` take it and those the rule names. The position moves once the alerts of a
 * batch are committed: at least once (a crash in between raises them again). Several instances
 * evaluate the rules by turns: the one that holds the reader's lease (../outputs/reader.ts).
 */
import { ConfigError } from "../../config";
import type { OutputStorage } from "../../db/output-storage";
import type { Logger } from "../../log";
import { stringify } from "../../protocol/json";
import type { Ingest } from "../../core/ingest/types";
import { ALERT_PREFIX, isAlert, type OutEvent } from "../outputs";
import { StoreReader, type EventSource, type ReaderStatus } from "../outputs";
import { RuleEngine, type Alert } from "./engine";
import { RuleError, compileMatch } from "./match";
import { parseRule, type AlertRule } from "./model";

export type Origin = "config" | "api";

export interface RulesStatus extends ReaderStatus {
  lag: number;
  /** Alerts raised since Core started. */
  alerts: number;
  /** Alerts a cool-down held back since Core started, per rule. */
  suppressed: Record<string, number>;
}

export type RuleChange = { ok: true } | { ok: false; status: 400 | 404 | 409; code: string; message: string };

/** New values remembered per rule at most (about 10 MB of ASNs or addresses across rules). */
const MAX_SEEN = 200_000;
/** Longest the rules evaluate events before other work on the thread gets a turn. */
const SLICE_MS = 10;

export class Rules {
  private readonly defs = new Map<string, { rule: AlertRule; origin: Origin; paused: boolean }>();
  private readonly seen = new Map<string, Set<string>>();
  private readonly engine: RuleEngine;
  private reader: StoreReader | null = null;
  private alerts = 0;
  private lastCommitted = 0;
  /** New values seen in the batch being delivered, stored once its alerts are committed. */
  private newSeen: [string, string][] = [];
  private changes: Promise<unknown> = Promise.resolve();
  /** Stored rules that are not valid, warned of once (definitions are read again now and then). */
  private readonly warned = new Set<string>();
  /** Told after a definition was added or removed here (the other instances reload). */
  onChange: () => void = () => {};

  constructor(
    private readonly deps: { store: OutputStorage; source: EventSource; ingest: Ingest; logger: Logger },
  ) {
    this.engine = new RuleEngine({
      has: (rule, value) => this.seenOf(rule).has(value),
      add: (rule, value) => {
        const set = this.seenOf(rule);
        if (set.size >= MAX_SEEN) return;
        set.add(value);
        this.newSeen.push([rule, value]);
      },
    });
  }

  async start(fromConfig: unknown[]): Promise<void> {
    for (const raw of fromConfig) {
      const p = parseRule(raw);
      const problem = p.ok ? this.compileError(p.value) : p.error;
      if (problem !== null || !p.ok) throw new ConfigError(`invalid value for "rules": ${problem} (docs/outputs.md)`);
      if (this.defs.has(p.value.name)) throw new ConfigError(`invalid value for "rules": two rules are named ${JSON.stringify(p.value.name)}`);
      this.defs.set(p.value.name, { rule: p.value, origin: "config", paused: false });
    }
    this.lastCommitted = await this.deps.source.lastId();
    await this.load();
    await StoreReader.pin(this.deps.store, this.deps.source, "rules", "latest");
    this.reader = new StoreReader({
      key: "rules",
      source: this.deps.source,
      positions: this.deps.store,
      batchSize: 1000,
      retry: { minMs: 500, maxMs: 30_000, maxAttempts: 0 },
      from: "latest",
      // Alerts never raise alerts.
      select: (e) => !isAlert(e),
      // Without rules, events are not even read (a rule applies from the next event on).
      skipAll: () => this.engine.size === 0,
      deliver: (events) => this.deliver(events),
      // Another instance may have seen values meanwhile.
      onTake: () => this.seen.clear(),
      logger: this.deps.logger,
    });
    this.reader.start();
  }

  /** Takes the rules defined over REST as stored now (another instance may have changed them). */
  reload(): Promise<void> {
    return this.serially(() => this.load());
  }

  private async load(): Promise<void> {
    const stored = new Map<string, { rule: AlertRule; paused: boolean }>();
    for (const row of await this.deps.store.rules()) {
      const p = parseRule(row.definition);
      if (!p.ok || this.compileError(p.value) !== null) {
        if (!this.warned.has(row.name)) this.deps.logger.error({ rule: row.name }, "stored rule is not valid; not used");
        this.warned.add(row.name);
        continue;
      }
      stored.set(p.value.name, { rule: p.value, paused: row.paused });
    }
    for (const [name, d] of this.defs) {
      const now = stored.get(name);
      // Removed, or its `new_value` field changed: the values seen are read afresh.
      if (d.origin === "api" && (!now || now.rule.new_value !== d.rule.new_value)) this.seen.delete(name);
      if (d.origin === "api" && !now) this.defs.delete(name);
    }
    for (const { rule, paused } of stored.values()) if (this.defs.get(rule.name)?.origin !== "config") this.defs.set(rule.name, { rule, origin: "api", paused });
    this.engine.setRules(this.rules());
  }

  private serially<T>(f: () => Promise<T>): Promise<T> {
    const p = this.changes.then(f);
    this.changes = p.catch(() => {});
    return p;
  }

  committed(lastId: number): void {
    this.lastCommitted = Math.max(this.lastCommitted, lastId);
    this.reader?.notify();
  }

  list(): { rule: AlertRule; origin: Origin; paused: boolean }[] {
    return [...this.defs.values()];
  }

  get(name: string) {
    return this.defs.get(name) ?? null;
  }

  status(): RulesStatus {
    const s = this.reader?.status() ?? { state: "stopped", position: 0, delivered: 0, failed: 0, dropped: 0, last_error: null, last_delivery_at: null };
    return { ...s, lag: Math.max(0, this.lastCommitted - s.position), alerts: this.alerts, suppressed: this.engine.suppressed() };
  }

  async add(raw: unknown): Promise<RuleChange> {
    const p = parseRule(raw);
    if (!p.ok) return { ok: false, status: 400, code: "bad_request", message: p.error };
    const problem = this.compileError(p.value);
    if (problem !== null) return { ok: false, status: 400, code: "bad_request", message: problem };
    const rule = p.value;
    const name = rule.name;
    return this.serially(async () => {
      if (this.defs.has(name) || !(await this.deps.store.addRule(name, rule))) return { ok: false, status: 409, code: "conflict", message: `a rule named ${name} exists already` } as const;
      this.defs.set(name, { rule, origin: "api", paused: false });
      this.engine.setRules(this.rules());
      this.deps.logger.info({ rule: name }, "rule added");
      this.onChange();
      return { ok: true } as const;
    });
  }

  /** Replaces a rule defined over REST (it stays paused if it was); its counts and cool-downs start afresh. */
  async update(name: string, raw: unknown): Promise<RuleChange> {
    const given = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
    if (given && given.name !== undefined && given.name !== name) return { ok: false, status: 400, code: "bad_request", message: `invalid rule: /name is ${name} (a rule cannot be renamed; add one under the new name)` };
    const p = parseRule(given ? { ...given, name } : raw);
    if (!p.ok) return { ok: false, status: 400, code: "bad_request", message: p.error };
    const problem = this.compileError(p.value);
    if (problem !== null) return { ok: false, status: 400, code: "bad_request", message: problem };
    const rule = p.value;
    return this.serially(async () => {
      const d = this.changeable(name, "edit");
      if (!d.ok) return d.refusal;
      const forgetSeen = d.def.rule.new_value !== rule.new_value;
      if (!(await this.deps.store.updateRule(name, rule, forgetSeen))) return gone(name);
      if (forgetSeen) this.seen.delete(name);
      this.defs.set(name, { ...d.def, rule });
      this.engine.setRules(this.rules());
      this.deps.logger.info({ rule: name }, "rule changed");
      this.onChange();
      return { ok: true } as const;
    });
  }

  /** Pauses (it raises nothing until resumed, across restarts) or resumes a rule defined over REST. */
  pause(name: string, paused: boolean): Promise<RuleChange> {
    return this.serially(async () => {
      const d = this.changeable(name, paused ? "pause" : "resume");
      if (!d.ok) return d.refusal;
      if (d.def.paused === paused) return { ok: true } as const;
      if (!(await this.deps.store.pauseRule(name, paused))) return gone(name);
      this.defs.set(name, { ...d.def, paused });
      this.engine.setRules(this.rules());
      this.deps.logger.info({ rule: name }, paused ? "rule paused" : "rule resumed");
      this.onChange();
      return { ok: true } as const;
    });
  }

  private changeable(name: string, what: string) {
    const d = this.defs.get(name);
    if (!d) return { ok: false, refusal: gone(name) } as const;
    if (d.origin === "config") return { ok: false, refusal: { ok: false, status: 409, code: "conflict", message: `rule ${name} is defined in the config file; ${what} it there` } } as const;
    return { ok: true, def: d } as const;
  }

  remove(name: string): Promise<RuleChange> {
    return this.serially(async () => {
      const c = this.changeable(name, "remove");
      if (!c.ok) return c.refusal;
      await this.deps.store.deleteRule(name);
      this.defs.delete(name);
      this.seen.delete(name);
      this.engine.setRules(this.rules());
      this.deps.logger.info({ rule: name }, "rule removed");
      this.onChange();
      return { ok: true } as const;
    });
  }

  async stop(): Promise<void> {
    await this.changes;
    await this.reader?.stop();
  }

  /** The rules in force: not paused. */
  private rules(): AlertRule[] {
    return [...this.defs.values()].filter((d) => !d.paused).map((d) => d.rule);
  }

  private compileError(rule: AlertRule): string | null {
    try {
      compileMatch(rule.match);
      return null;
    } catch (e) {
      if (e instanceof RuleError) return `invalid rule: ${e.message}`;
      throw e;
    }
  }

  /** Loaded before each batch (loadSeen): the engine asks synchronously. */
  private seenOf(rule: string): Set<string> {
    let s = this.seen.get(rule);
    if (!s) {
      s = new Set();
      this.seen.set(rule, s);
    }
    return s;
  }

  /** What the `new_value` rules have seen, for those not read yet. */
  private async loadSeen(): Promise<void> {
    for (const { rule } of this.defs.values()) {
      if (rule.new_value === undefined || this.seen.has(rule.name)) continue;
      const values = await this.deps.store.seenValues(rule.name);
      // A removal while it was read: nothing to remember.
      if (this.defs.get(rule.name)?.rule === rule) this.seen.set(rule.name, new Set(values));
    }
  }

  private async deliver(events: OutEvent[]): Promise<void> {
    await this.loadSeen();
    let raised = 0;
    let slice = performance.now();
    for (const e of events) {
      // One event can cost a full-length match per regex (regex.ts): between events, not only
      // between batches, the thread goes back to acknowledging events and answering REST.
      if (performance.now() - slice >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
      for (const a of this.engine.evaluate(e)) {
        this.deps.ingest.enqueue(alertEvent(a), null);
        raised++;
      }
    }
    if (raised > 0) await this.deps.ingest.flush();
    this.alerts += raised;
    const seen = this.newSeen;
    this.newSeen = [];
    const byRule = new Map<string, string[]>();
    for (const [rule, value] of seen) byRule.set(rule, [...(byRule.get(rule) ?? []), value]);
    for (const [rule, values] of byRule) if (this.defs.has(rule)) await this.deps.store.addSeen(rule, values);
  }
}

/** The stored form of an alert: an event of the raising event's node, pot and source, at the time Core raised it. */
export function alertEvent(a: Alert) {
  const { rule, event: e } = a;
  const data: Record<string, unknown> = {
    rule: rule.name,
    severity: rule.severity ?? "medium",
    reason: a.reason,
    count: a.count,
    outputs: rule.outputs ?? [],
    trigger: { id: e.id, event_type: e.event_type, timestamp: new Date(e.ts).toISOString(), data: e.data },
  };
  if (rule.description) data.description = rule.description;
  // Core's time, not the event's: a sender's clock must not date an alert (1970) or keep it from retention (9999).
  return { node_id: e.node_id, pot_id: e.pot_id, pot_type: e.pot_type, event_type: `${ALERT_PREFIX}${rule.name}`, ts: Date.now(), src_ip: e.src_ip, text: stringify(data), username: null, password: null };
}

const gone = (name: string) => ({ ok: false, status: 404, code: "not_found", message: `rule ${name} does not exist` }) as const;
