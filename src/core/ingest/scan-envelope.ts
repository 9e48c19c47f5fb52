/**
 * The fast path for Protocol v2 event envelopes, `{"version":2,"message":{"PotEvent":{...}}}`
 * and `{"version":2,"message":{"PotLog":{...}}}`: what nodes send on 9100 and on the control
 * channel (the upstream Go node sends every honeypot event as a PotLog). The same idea and
 * guarantees as scan.ts: the line is validated as JSON, the fields that become columns are
 * read in place, and the event's data is noted as runs of members that the pipeline copies
 * byte for byte. It says yes only when it is sure; anything unusual takes the general path
 * (JSON.parse + normalise), and a test checks that the two agree on generated and mutated
 * envelopes.
 *
 * Data as normalise.ts builds it:
 * - PotEvent: the payload's own other members, then the members of `data` (or `metadata`),
 *   a payload member winning over a nested one of the same name. The runs put the nested
 *   members first, so that reading the data back (last key wins) gives the same object. A
 *   nested `src_ip` is the column when the payload has none, and leaves data then.
 * - PotLog with a honeypot event id as `log_type` (docs/protocol.md, "PotLog"): the members of
 *   `data` without `src_ip` (the column), `timestamp` (the event time when readable; an
 *   unreadable one sends the line to the general path) and an `eventid` equal to the
 *   log_type. A PotLog of a process's output (`stdout`) takes the general path.
 */
import { hasBackslash, isDigits, keyEnd, MAX_LEVELS, Recent, skipNested, skipNumber, skipSpace, skipString, startLine } from "./json-scan";
import { DATA, EVENT, EVENT_TYPE, EVENTID, fieldOf, HONEYPOT_ID, HONEYPOT_TYPE, LOG_TYPE, METADATA, NODE_ID, OTHER, PASSWORD, POT_ID, POT_TYPE, PROTO, SRC_IP, TIMESTAMP, USERNAME } from "./envelope-fields";
import { TIME_ABSENT, timeNumber, timeText, type ScannedLine } from "./scan";

export const NATIVE = 0;
export const POT_EVENT = 1;
export const POT_LOG = 2;

const STRING = 1;
const NUMBER = 2;
const NULL = 3;
const BOOL = 4;
const OBJECT = 5;
const ARRAY = 6;

/** The kind of the value `skipValue` skipped last. */
let kind = 0;
/** Nesting levels this line may use (the line itself is level 1): `max_nesting_depth`, at most MAX_LEVELS. */
let levels = MAX_LEVELS;

/** `t[i]` starts a value at nesting `level`: returns the index past it (-1 when invalid) and sets `kind`. */
function skipValue(t: string, i: number, level: number): number {
  const c = t.charCodeAt(i);
  if (c === 34) {
    kind = STRING;
    return skipString(t, i);
  }
  if (c === 45 || (c >= 48 && c <= 57)) {
    kind = NUMBER;
    return skipNumber(t, i);
  }
  if (c === 123 || c === 91) {
    kind = c === 123 ? OBJECT : ARRAY;
    return skipNested(t, i, level, levels);
  }
  if (t.startsWith("null", i)) {
    kind = NULL;
    return i + 4;
  }
  if (t.startsWith("true", i)) {
    kind = BOOL;
    return i + 4;
  }
  if (t.startsWith("false", i)) {
    kind = BOOL;
    return i + 5;
  }
  return -1;
}

const recentTypes = new Recent();
const recentPots = new Recent();
const recentNodes = new Recent();

/** Lines whose data falls into more runs than this take the general path. */
const MAX_RUNS = 16;

/** Per-line state of the payload scan; one instance, reused. */
const st = {
  shape: 0,
  eventType: null as string | null,
  event: null as string | null,
  logType: null as string | null,
  hasSrcIp: false,
  hasUser: false,
  hasPassword: false,
  sawNested: false,
  /** The nested src_ip member, `[start, end)`, decided at the end (cut, or kept as data). */
  nestedSrcStart: -1,
  nestedSrcEnd: -1,
  nestedSrc: null as string | null,
  nestedSrcKind: 0,
  nestedUser: null as string | null,
  nestedPassword: null as string | null,
  /** A PotLog's data naming its pot as a flat line would: the fallback for the payload's. */
  dataPotId: null as string | null,
  dataPotType: null as string | null,
  /** The payload's own data members: runs appended after the nested ones. */
  extra: [] as number[],
};

/**
 * Scans `t` into `out`; true when `t` is a PotEvent or PotLog envelope this path can take
 * whole (`out.shape` says which). On false, the caller takes the general path.
 */
export function scanEnvelopeLine(t: string, out: ScannedLine, maxDepth = MAX_LEVELS): boolean {
  levels = Math.min(maxDepth, MAX_LEVELS);
  // The payload is level 3 and its data level 4: shallower limits are the general path's to word.
  if (levels < 4) return false;
  startLine(t);
  out.eventid = "";
  out.nodeDigits = out.potId = out.potType = out.honeypotId = out.honeypotType = out.srcIp = out.username = out.password = null;
  out.timestamp.kind = out.time.kind = TIME_ABSENT;
  out.line = t;
  out.runs.length = 0;
  out.shape = NATIVE;
  let sawVersion = false;
  let sawMessage = false;

  let i = skipSpace(t, 0);
  if (t.charCodeAt(i) !== 123) return false;
  i = skipSpace(t, i + 1);
  for (;;) {
    const ke = keyEnd(t, i);
    if (ke < 0) return false;
    const len = ke - i - 1;
    const isVersion = len === 7 && t.startsWith("version", i + 1);
    const isMessage = len === 7 && t.startsWith("message", i + 1);
    if (!isVersion && !isMessage) return false; // an envelope has nothing else
    i = skipSpace(t, ke + 1);
    if (t.charCodeAt(i) !== 58) return false;
    i = skipSpace(t, i + 1);
    if (isVersion) {
      // The version this Core speaks, written plainly; anything else is the general path's to word.
      if (t.charCodeAt(i) !== 50 /* 2 */) return false;
      const c = t.charCodeAt(i + 1);
      if (c >= 48 && c <= 57) return false;
      if (c === 46 || c === 101 || c === 69) return false;
      i++;
      sawVersion = true;
    } else {
      if (sawMessage || t.charCodeAt(i) !== 123) return false;
      sawMessage = true;
      i = skipSpace(t, i + 1);
      const kindEnd = keyEnd(t, i);
      if (kindEnd < 0) return false;
      const kindLen = kindEnd - i - 1;
      if (kindLen === 8 && t.startsWith("PotEvent", i + 1)) out.shape = POT_EVENT;
      else if (kindLen === 6 && t.startsWith("PotLog", i + 1)) out.shape = POT_LOG;
      else return false;
      i = skipSpace(t, kindEnd + 1);
      if (t.charCodeAt(i) !== 58) return false;
      i = scanPayload(t, skipSpace(t, i + 1), out);
      if (i < 0) return false;
      i = skipSpace(t, i);
      if (t.charCodeAt(i) !== 125) return false; // exactly one kind in `message`
      i++;
    }
    i = skipSpace(t, i);
    const c = t.charCodeAt(i);
    if (c === 44) {
      i = skipSpace(t, i + 1);
      continue;
    }
    if (c === 125) break;
    return false;
  }
  return sawVersion && sawMessage && skipSpace(t, i + 1) === t.length;
}

/** The payload object at `t[i]`: columns into `out`, data into runs. Returns the index past it, -1 for the general path. */
function scanPayload(t: string, i: number, out: ScannedLine): number {
  if (t.charCodeAt(i) !== 123) return -1;
  const isLog = out.shape === POT_LOG;
  st.eventType = st.event = st.logType = st.nestedSrc = st.nestedUser = st.nestedPassword = st.dataPotId = st.dataPotType = null;
  st.hasSrcIp = st.hasUser = st.hasPassword = st.sawNested = false;
  st.nestedSrcStart = st.nestedSrcEnd = -1;
  st.extra.length = 0;
  i = skipSpace(t, i + 1);
  if (t.charCodeAt(i) === 125) return -1; // {} has no event type
  for (;;) {
    const ks = i;
    const ke = keyEnd(t, i);
    if (ke < 0) return -1;
    const field = fieldOf(t, ks + 1, ke - ks - 1);
    if (field === PROTO) return -1;
    i = skipSpace(t, ke + 1);
    if (t.charCodeAt(i) !== 58) return -1;
    const vs = skipSpace(t, i + 1);
    // A PotLog keeps its own other members in data: rare, left to the general path.
    if (isLog && (field === METADATA || field === EVENT_TYPE || field === EVENT)) return -1;
    if ((field === DATA || field === METADATA) && t.charCodeAt(vs) === 123) {
      // One nested object only: with both, data wins over metadata member by member.
      if (st.sawNested) return -1;
      st.sawNested = true;
      i = scanNested(t, vs, out, isLog);
      if (i < 0) return -1;
    } else {
      i = skipValue(t, vs, 4);
      if (i < 0) return -1;
      const ve = i;
      const str = kind === STRING;
      // Columns are plain strings (no escapes to undo), as on the native path.
      if (str && field !== OTHER && hasBackslash(t, vs + 1, ve - 1)) return -1;
      switch (field) {
        case NODE_ID:
          if (kind === NULL) out.nodeDigits = null;
          else if (kind === NUMBER && isDigits(t, vs, ve)) out.nodeDigits = recentNodes.of(t, vs, ve);
          else return -1;
          break;
        case POT_ID:
        case POT_TYPE:
          if (!str && kind !== NULL) return -1;
          if (field === POT_ID) out.potId = str ? recentPots.of(t, vs + 1, ve - 1) : null;
          else out.potType = str ? recentPots.of(t, vs + 1, ve - 1) : null;
          break;
        case EVENT_TYPE:
        case EVENT:
          if (!str) return -1;
          else if (field === EVENT_TYPE) st.eventType = recentTypes.of(t, vs + 1, ve - 1);
          else st.event = recentTypes.of(t, vs + 1, ve - 1);
          break;
        case LOG_TYPE:
          if (!isLog) st.extra.push(ks, ve);
          else if (!str) return -1;
          else st.logType = recentTypes.of(t, vs + 1, ve - 1);
          break;
        case TIMESTAMP:
          if (kind === STRING) timeText(out.timestamp, vs + 1, ve - 1);
          else if (kind === NUMBER) timeNumber(out.timestamp, Number(t.slice(vs, ve)));
          else if (kind !== NULL) return -1;
          break;
        case SRC_IP:
          // The payload's own src_ip: the column. Null or other kinds are left to the general path.
          if (isLog || !str) return -1;
          out.srcIp = t.slice(vs + 1, ve - 1);
          st.hasSrcIp = true;
          break;
        case DATA:
        case METADATA:
          // Null is ignored; a nested value of another kind is kept under its name: general path.
          if (kind !== NULL) return -1;
          break;
        case USERNAME:
        case PASSWORD:
          if (str) {
            if (field === USERNAME) out.username = t.slice(vs + 1, ve - 1);
            else out.password = t.slice(vs + 1, ve - 1);
          }
          if (field === USERNAME) st.hasUser = true;
          else st.hasPassword = true;
          st.extra.push(ks, ve);
          break;
        default:
          if (isLog) return -1; // a PotLog's other members are rare: the general path
          st.extra.push(ks, ve);
      }
    }
    i = skipSpace(t, i);
    const c = t.charCodeAt(i);
    if (c === 44) {
      i = skipSpace(t, i + 1);
      continue;
    }
    if (c !== 125) return -1;
    break;
  }
  return finish(out, isLog) ? i + 1 : -1;
}

/** The nested data (or metadata) object at `t[i]`: its members into runs. */
function scanNested(t: string, i: number, out: ScannedLine, isLog: boolean): number {
  const runs = out.runs;
  let runStart = -1;
  let runEnd = -1;
  i = skipSpace(t, i + 1);
  if (t.charCodeAt(i) === 125) return i + 1;
  for (;;) {
    const ms = i;
    const ke = keyEnd(t, i);
    if (ke < 0) return -1;
    const field = fieldOf(t, ms + 1, ke - ms - 1);
    if (field === PROTO) return -1;
    i = skipSpace(t, ke + 1);
    if (t.charCodeAt(i) !== 58) return -1;
    const vs = skipSpace(t, i + 1);
    i = skipValue(t, vs, 5);
    if (i < 0) return -1;
    const ve = i;
    const str = kind === STRING;
    let cut = false;
    switch (field) {
      case SRC_IP:
        if (st.nestedSrcStart >= 0) return -1; // twice: the last one counts, left to the general path
        if (str && hasBackslash(t, vs + 1, ve - 1)) return -1;
        st.nestedSrcStart = ms;
        st.nestedSrcEnd = ve;
        st.nestedSrcKind = kind;
        st.nestedSrc = str ? t.slice(vs + 1, ve - 1) : null;
        cut = true;
        break;
      case USERNAME:
      case PASSWORD:
        if (str && hasBackslash(t, vs + 1, ve - 1)) return -1;
        if (field === USERNAME) st.nestedUser = str ? t.slice(vs + 1, ve - 1) : null;
        else st.nestedPassword = str ? t.slice(vs + 1, ve - 1) : null;
        break;
      case TIMESTAMP:
        if (!isLog) break;
        // The honeypot's own time; normalise keeps an unreadable one in data: the general path.
        if (str && !hasBackslash(t, vs + 1, ve - 1)) timeText(out.time, vs + 1, ve - 1);
        else if (kind === NUMBER) timeNumber(out.time, Number(t.slice(vs, ve)));
        else return -1;
        cut = true;
        break;
      case EVENTID:
        if (!isLog) break;
        // Cut when it repeats the log_type, which must then already be known.
        if (!str || st.logType === null || ve - vs - 2 !== st.logType.length || !t.startsWith(st.logType, vs + 1)) return -1;
        cut = true;
        break;
      case POT_ID:
      case POT_TYPE:
      case HONEYPOT_ID:
      case HONEYPOT_TYPE: {
        if (!isLog) break;
        // Cut from a PotLog's data, as from a flat line; the plugin's names win over pot_id/pot_type.
        if (!str && kind !== NULL) return -1;
        if (str && hasBackslash(t, vs + 1, ve - 1)) return -1;
        const v = str ? recentPots.of(t, vs + 1, ve - 1) : null;
        if (field === HONEYPOT_ID) out.honeypotId = v;
        else if (field === HONEYPOT_TYPE) out.honeypotType = v;
        else if (field === POT_ID) st.dataPotId = v;
        else st.dataPotType = v;
        cut = true;
        break;
      }
      case NODE_ID:
        if (isLog) return -1;
        break;
    }
    if (!cut) {
      if (runStart < 0) runStart = ms;
      runEnd = ve;
    } else if (runStart >= 0) {
      if (runs.length >= 2 * MAX_RUNS) return -1;
      runs.push(runStart, runEnd);
      runStart = -1;
    }
    i = skipSpace(t, i);
    const c = t.charCodeAt(i);
    if (c === 44) {
      i = skipSpace(t, i + 1);
      continue;
    }
    if (c !== 125) return -1;
    if (runStart >= 0) runs.push(runStart, runEnd);
    return i + 1;
  }
}

/** Settles what depends on the whole payload: the event type, src_ip, credentials, run order. */
function finish(out: ScannedLine, isLog: boolean): boolean {
  const runs = out.runs;
  if (isLog) {
    if (st.logType === null) return false;
    const dot = st.logType.indexOf(".");
    if (dot <= 0 || dot === st.logType.length - 1) return false; // a process's output: log.<type>
    out.eventid = st.logType;
    out.potId ??= out.honeypotId ?? st.dataPotId;
    out.potType ??= out.honeypotType ?? st.dataPotType;
    if (st.nestedSrcStart >= 0) {
      if (st.nestedSrcKind !== STRING && st.nestedSrcKind !== NULL) return false;
      out.srcIp = st.nestedSrc;
    }
  } else {
    const type = st.eventType ?? st.event;
    if (type === null) return false;
    out.eventid = type;
    if (st.nestedSrcStart >= 0) {
      // The payload's src_ip wins and the nested one stays data; else a nested string is the column.
      if (st.hasSrcIp || st.nestedSrcKind !== STRING) runs.push(st.nestedSrcStart, st.nestedSrcEnd);
      else out.srcIp = st.nestedSrc;
    }
  }
  if (!st.hasUser) out.username = st.nestedUser;
  if (!st.hasPassword) out.password = st.nestedPassword;
  // The payload's own members last: read back, a repeated key takes the last value.
  const extra = st.extra;
  if (runs.length + extra.length > 2 * MAX_RUNS) return false;
  for (let k = 0; k < extra.length; k++) runs.push(extra[k]!);
  return true;
}
