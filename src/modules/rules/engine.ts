/**
 * Alert rules over a stream of events, in id order (docs/outputs.md). Pure: the time is the
 * events' own (thresholds and cool-downs count by event timestamps, so a backlog read after a
 * restart or an outage fires exactly as it would have live), and what `new_value` rules have
 * seen is kept by the caller.
 *
 * Per rule and source address: a threshold keeps the times of the last `count` matching
 * events; a cool-down keeps when the rule last fired. Both are in memory, bounded (the least
 * recently active addresses are forgotten first), and start empty when Core starts.
 */
import type { OutEvent } from "../outputs";
import { fieldOf } from "../outputs";
import { compileMatch } from "./match";
import type { AlertRule } from "./model";

/** Addresses tracked per rule at most. */
export const MAX_KEYS = 100_000;

export interface SeenValues {
  has(rule: string, value: string): boolean;
  add(rule: string, value: string): void;
}

export interface Alert {
  rule: AlertRule;
  event: OutEvent;
  /** Matching events behind it: the threshold's count, else 1. */
  count: number;
  reason: string;
}

interface RuleState {
  rule: AlertRule;
  matches: (e: OutEvent) => boolean;
  /** Per address: times of recent matches (threshold rules). */
  recent: Map<string, number[]>;
  /** Per address: when the rule last fired. */
  fired: Map<string, number>;
  suppressed: number;
}

/** Re-inserting keeps a Map in order of last use, so the oldest key is the first. */
function touch<V>(m: Map<string, V>, k: string, v: V): void {
  m.delete(k);
  m.set(k, v);
  if (m.size > MAX_KEYS) m.delete(m.keys().next().value!);
}

export class RuleEngine {
  private rules = new Map<string, RuleState>();

  constructor(private readonly seen: SeenValues) {}

  /** Replaces the rule set; rules whose definition is unchanged keep their state. Throws RuleError on a bad rule. */
  setRules(rules: AlertRule[]): void {
    const next = new Map<string, RuleState>();
    for (const rule of rules) {
      const old = this.rules.get(rule.name);
      if (old && JSON.stringify(old.rule) === JSON.stringify(rule)) next.set(rule.name, old);
      else next.set(rule.name, { rule, matches: compileMatch(rule.match), recent: new Map(), fired: new Map(), suppressed: 0 });
    }
    this.rules = next;
  }

  get size(): number {
    return this.rules.size;
  }

  /** Alerts suppressed by cool-downs, per rule. */
  suppressed(): Record<string, number> {
    return Object.fromEntries([...this.rules].map(([name, s]) => [name, s.suppressed]));
  }

  evaluate(e: OutEvent): Alert[] {
    const out: Alert[] = [];
    for (const s of this.rules.values()) {
      if (!s.matches(e)) continue;
      const a = this.fire(s, e);
      if (a) out.push(a);
    }
    return out;
  }

  private fire(s: RuleState, e: OutEvent): Alert | null {
    const { rule } = s;
    const key = e.src_ip ?? "-";
    let count = 1;
    let reason = rule.description ?? `matched rule ${rule.name}`;
    if (rule.new_value !== undefined) {
      const v = fieldOf(e, rule.new_value);
      if (v === undefined || v === null || typeof v === "object") return null;
      const value = String(v);
      if (this.seen.has(rule.name, value)) return null;
      this.seen.add(rule.name, value);
      reason = `new ${rule.new_value} ${value}`;
    }
    if (rule.threshold) {
      const { count: n, window_ms } = rule.threshold;
      const times = (s.recent.get(key) ?? []).filter((t) => e.ts - t < window_ms);
      times.push(e.ts);
      if (times.length > n) times.splice(0, times.length - n);
      touch(s.recent, key, times);
      if (times.length < n) return null;
      count = times.length;
      reason = `${count} matching events from ${key} within ${window_ms} ms`;
    }
    const cooldown = rule.cooldown_ms ?? 600_000;
    const last = s.fired.get(key);
    if (rule.new_value === undefined && last !== undefined && Math.abs(e.ts - last) < cooldown) {
      s.suppressed++;
      return null;
    }
    touch(s.fired, key, e.ts);
    // A threshold starts counting afresh after it fired.
    if (rule.threshold) s.recent.delete(key);
    return { rule, event: e, count, reason };
  }
}
