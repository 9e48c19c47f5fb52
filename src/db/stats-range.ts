/**
 * The stats over any time range and for one node, pot or kind, on every backend
 * (event-queries.ts, pg/event-queries.ts):
 *
 * - how many events a range holds, exactly, from the segment summaries: a segment wholly
 *   inside the range adds its stored count; only the others are read, by id range
 *   (`countPlan`). Events arrive nearly in time order, so a range reads a few segments at its
 *   edges. Under a node/pot/kind filter, a segment mixes the sources that were busy: each whole
 *   segment is read once, counted by source and type, and kept (`SegmentTallies`).
 * - top lists counted over the range's most recent matching events, a page at a time newest
 *   first (`readRecent`): the hourly counters have no node or pot dimension, so a filtered
 *   dashboard and the top list of any data field (`fieldValue`) read events, at most
 *   RECENT_SAMPLE of them, and say how many they read.
 */
import { isKexType } from "./hassh";
import { COMMANDS_SAMPLE, type TopEntry } from "./read-limits";
import type { EventFilter } from "./event-queries";
import { SEG_SIZE, type CountKind } from "./event-store";

/** An event's segment is its id shifted right by this (SEG_SIZE = 2^SEG_BITS). */
export const SEG_BITS = Math.log2(SEG_SIZE);
import type { MaybePromise } from "./stores";

/** A time range, ms since the epoch: from inclusive, to exclusive. */
export interface StatsRange {
  from: number;
  to: number;
}

/** Whose events the stats count: a node, a pot, a kind of pot (any of them together). */
export interface SourceFilter {
  nodeId?: bigint;
  potId?: string;
  potType?: string;
}

/** Events the sampled top lists read at most: the range's most recent ones (the commands' sample, read-limits.ts). */
export const RECENT_SAMPLE = COMMANDS_SAMPLE;

export const hasSourceFilter = (f: SourceFilter): boolean => f.nodeId !== undefined || f.potId !== undefined || f.potType !== undefined;

/** One event as the samplers read it: its data parsed. */
export interface SampledEvent {
  srcIp: string | null;
  eventType: string;
  data: Record<string, unknown>;
}

type Page<E> = (filter: EventFilter, cursor: number | null) => MaybePromise<{ events: E[]; nextCursor: number | null }>;

/**
 * Reads the most recent events matching `filter`, a page at a time, newest first, until `max`
 * were read or none are left; returns how many were read.
 */
export async function readRecent<E>(page: Page<E>, filter: EventFilter, visit: (e: E) => void, max = RECENT_SAMPLE): Promise<number> {
  let read = 0;
  for (let cursor: number | null = null; read < max; ) {
    const p = await page(filter, cursor);
    for (const e of p.events) {
      if (read === max) break;
      visit(e);
      read++;
    }
    if (p.nextCursor === null) break;
    cursor = p.nextCursor;
  }
  return read;
}

/** Counts of values, to take the most frequent of. */
export class Tally {
  readonly counts = new Map<string, number>();
  add(value: string): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
  }
  top(n: number): TopEntry[] {
    return topOf(this.counts, n);
  }
}

/** The `n` most frequent, ties by value. */
export function topOf(counts: Map<string, number>, n: number): TopEntry[] {
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, n).map(([value, count]) => ({ value, count }));
}

/**
 * A field of an event's data by its path: `url`, `data.url` (the same: `data.` is the event's
 * data) or a nested `request.headers.user-agent`. Text as it is, numbers and booleans as text;
 * each element of an array of such; nothing for anything else (missing, an object, null).
 */
export function fieldValues(data: Record<string, unknown>, path: readonly string[]): string[] {
  let v: unknown = data;
  for (const key of path) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.hasOwn(v, key)) return [];
    v = (v as Record<string, unknown>)[key];
  }
  const scalar = (x: unknown): string | null => (typeof x === "string" ? x : typeof x === "number" || typeof x === "boolean" ? String(x) : null);
  if (Array.isArray(v)) return v.map(scalar).filter((x): x is string => x !== null);
  const s = scalar(v);
  return s === null ? [] : [s];
}

/** Between the values of a combined field (`username,password`): `root / 123456`. */
export const FIELD_JOIN = " / ";

/**
 * The values an event counts for: those of one path, or for several (a combination like
 * `username,password`) their first values joined by FIELD_JOIN, when the event has them all.
 */
export function fieldsValues(data: Record<string, unknown>, paths: readonly (readonly string[])[]): string[] {
  if (paths.length === 1) return fieldValues(data, paths[0]!);
  const parts: string[] = [];
  for (const p of paths) {
    const v = fieldValues(data, p)[0];
    if (v === undefined) return [];
    parts.push(v);
  }
  return [parts.join(FIELD_JOIN)];
}

/**
 * A field as REST takes it, split into paths of keys (`data.` dropped): one path (`url`,
 * `data.request.method`) or several joined by commas (`username,password`); null when it is not one.
 */
export function fieldPaths(raw: string): string[][] | null {
  const paths = raw.split(",").map((one) => {
    const keys = one.split(".");
    if (keys[0] === "data" && keys.length > 1) keys.shift();
    return keys;
  });
  return paths.length <= 4 && paths.every((keys) => keys.every((k) => k !== "")) ? paths : null;
}

/** The event types whose `username` and `password` the credential pairs are read from: `<kind>.login.*`. */
export const isLoginType = (name: string): boolean => name.includes(".login.");

/** The paths of a credential pair. */
export const CREDENTIAL_PAIR: readonly (readonly string[])[] = [["username"], ["password"]];

/** Where the command lists read `input`: the commands' event type (topCommands in event-queries.ts). */
export const COMMAND_EVENT = "cowrie.command.input";

/** The top lists a filtered stats answer counts over its sample: every counter kind, and the commands. */
export class StatsSample {
  private readonly tallies = new Map<CountKind | "commands" | "credentials", Tally>();

  private tally(kind: CountKind | "commands" | "credentials"): Tally {
    let t = this.tallies.get(kind);
    if (!t) this.tallies.set(kind, (t = new Tally()));
    return t;
  }

  /** Counts one event as the writers count them (hourly-counts.ts, the ingest's credentials). */
  add(e: SampledEvent): void {
    this.tally("event_type").add(e.eventType);
    if (e.srcIp) this.tally("src_ip").add(e.srcIp);
    const { username, password, hassh, input } = e.data;
    if (typeof username === "string") this.tally("username").add(username);
    if (typeof password === "string") this.tally("password").add(password);
    if (typeof username === "string" && typeof password === "string" && isLoginType(e.eventType)) this.tally("credentials").add(username + FIELD_JOIN + password);
    if (typeof hassh === "string" && hassh !== "" && isKexType(e.eventType)) this.tally("hassh").add(hassh);
    if (typeof input === "string" && e.eventType === COMMAND_EVENT) this.tally("commands").add(input);
  }

  /**
   * The lists, the countries and ASNs by the sampled addresses' enrichment (one lookup per
   * distinct address).
   */
  async lists(top: number, geo: (ips: string[]) => MaybePromise<Map<string, { country: string | null; asn: number | null }>>): Promise<{ top: Record<CountKind, TopEntry[]>; commands: TopEntry[]; credentials: TopEntry[] }> {
    const ips = this.tally("src_ip").counts;
    const where = await geo([...ips.keys()]);
    const country = this.tally("country");
    const asn = this.tally("asn");
    for (const [ip, n] of ips) {
      const g = where.get(ip);
      if (g?.country) country.counts.set(g.country, (country.counts.get(g.country) ?? 0) + n);
      if (g?.asn !== null && g?.asn !== undefined) asn.counts.set(String(g.asn), (asn.counts.get(String(g.asn)) ?? 0) + n);
    }
    const kinds: CountKind[] = ["src_ip", "username", "password", "event_type", "country", "asn", "hassh"];
    return { top: Object.fromEntries(kinds.map((k) => [k, this.tally(k).top(top)])) as Record<CountKind, TopEntry[]>, commands: this.tally("commands").top(top), credentials: this.tally("credentials").top(top) };
  }
}

/** A segment's summary as the count reads it. */
export interface SegmentSpan {
  seg: number;
  minTs: number;
  maxTs: number;
  count: number;
}

/**
 * How to count a range's events: the stored counts of the segments wholly inside it, and the id
 * ranges of the others to count by reading them (consecutive segments joined).
 */
export function countPlan(segs: readonly SegmentSpan[], range: StatsRange): { summed: number; scan: [number, number][] } {
  let summed = 0;
  const partial: number[] = [];
  for (const s of segs) {
    if (s.maxTs < range.from || s.minTs >= range.to) continue;
    if (s.minTs >= range.from && s.maxTs < range.to) summed += s.count;
    else partial.push(s.seg);
  }
  return { summed, scan: idRuns(partial) };
}

/** Events of one segment by source and type. */
export interface SegmentTally {
  source: number;
  type: number;
  n: number;
}

/** Joins segments into id ranges, consecutive ones into one. */
function idRuns(segs: readonly number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const seg of segs) {
    const lo = seg * SEG_SIZE;
    const last = runs[runs.length - 1];
    if (last && last[1] === lo - 1) last[1] = lo + SEG_SIZE - 1;
    else runs.push([lo, lo + SEG_SIZE - 1]);
  }
  return runs;
}

/** Each segment's sources, from its `source` segment keys. */
export function sourcesBySegment(rows: readonly { seg: number; value: number }[]): Map<number, number[]> {
  const keys = new Map<number, number[]>();
  for (const r of rows) {
    const k = keys.get(r.seg);
    if (k) k.push(r.value);
    else keys.set(r.seg, [r.value]);
  }
  return keys;
}

/**
 * Segments whose counts by source and type are kept at most: 200M events, about 50 MB at some
 * 20 sources and types per segment (10M events are 2,442 segments); past it they are dropped
 * and read again as asked.
 */
const TALLIES_MAX = 50_000;

/**
 * The counts of a filtered range by event type, exactly, without reading its events again and
 * again: the hourly counters have no node or pot dimension and a segment mixes the events of
 * every pot that was busy, so a segment wholly inside the range is read once, grouped by source
 * and type, and kept (by its stored count: a segment that gained events is read again);
 * segments at the range's edges are read each time, within the range.
 */
export class SegmentTallies {
  private readonly kept = new Map<number, { count: number; rows: SegmentTally[] }>();

  /**
   * What to read for a range of some sources: `missing`, id ranges of whole segments (by
   * default those wholly inside the range) to read grouped (then `keep`); `edges`, id ranges to
   * count within the range.
   */
  plan(
    segs: readonly SegmentSpan[],
    range: StatsRange,
    match: Set<number>,
    sources: Map<number, number[]>,
    whole: (s: SegmentSpan) => boolean = (s) => s.minTs >= range.from && s.maxTs < range.to,
  ): { whole: SegmentSpan[]; missing: [number, number][]; edges: [number, number][] } {
    const wholes: SegmentSpan[] = [];
    const missing: number[] = [];
    const edges: number[] = [];
    for (const s of segs) {
      if (s.maxTs < range.from || s.minTs >= range.to) continue;
      if (!(sources.get(s.seg) ?? []).some((k) => match.has(k))) continue;
      if (whole(s)) {
        wholes.push(s);
        if (this.kept.get(s.seg)?.count !== s.count) missing.push(s.seg);
      } else edges.push(s.seg);
    }
    return { whole: wholes, missing: idRuns(missing), edges: idRuns(edges) };
  }

  /** A kept segment's events of the matching sources. */
  matching(seg: number, match: Set<number>): number {
    let n = 0;
    for (const r of this.kept.get(seg)?.rows ?? []) if (match.has(r.source)) n += r.n;
    return n;
  }

  /** Keeps what a read of whole segments gave, per segment, with the segments' stored counts. */
  keep(rows: readonly (SegmentTally & { seg: number })[], segs: readonly SegmentSpan[]): void {
    if (this.kept.size > TALLIES_MAX) this.kept.clear();
    const count = new Map(segs.map((s) => [s.seg, s.count]));
    const fresh = new Map<number, SegmentTally[]>();
    for (const r of rows) {
      let list = fresh.get(r.seg);
      if (!list) fresh.set(r.seg, (list = []));
      list.push({ source: r.source, type: r.type, n: r.n });
    }
    for (const [seg, list] of fresh) this.kept.set(seg, { count: list.reduce((a, r) => a + r.n, 0) === count.get(seg) ? count.get(seg)! : -1, rows: list });
  }

  /** The whole segments' events of the matching sources, by type, added to `into`. */
  add(whole: readonly SegmentSpan[], match: Set<number>, into: Map<number, number>): void {
    for (const s of whole) for (const r of this.kept.get(s.seg)?.rows ?? []) if (match.has(r.source)) into.set(r.type, (into.get(r.type) ?? 0) + r.n);
  }
}

/**
 * How to count a timeline: a segment whose events all fall in one step (and in the range) adds
 * its stored count to that step; the others are read by id range. `inStep`: the step a segment
 * wholly falls in, or null.
 */
export function stepOf(s: SegmentSpan, ask: { start: number; end: number; step: number }): number | null {
  if (s.minTs < ask.start || s.maxTs >= ask.end) return null;
  const b = Math.floor((s.minTs - ask.start) / ask.step);
  return b === Math.floor((s.maxTs - ask.start) / ask.step) ? b : null;
}

export { idRuns };
