/**
 * What an event says about its session, read from its data text on the event writer's thread
 * (see session-tracker.ts): the session id and, by its type, what it adds to the session.
 */

/** What an event type adds to its session's summary. */
export const Kind = { Other: 0, LoginSuccess: 1, Command: 2, File: 3, TtyLog: 4, Closed: 5 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/**
 * By the end of the type's name, so every honeypot kind that names its events as Cowrie does
 * (`redis.login.success`, `adb.session.file_upload`; src/honeypots/shared/session.ts) fills its
 * sessions alike. Looked up once per event type, never per event.
 */
const SUFFIXES: [string, Kind][] = [
  [".login.success", Kind.LoginSuccess],
  [".command.input", Kind.Command],
  [".session.file_download", Kind.File],
  [".session.file_upload", Kind.File],
  [".log.closed", Kind.TtyLog],
  [".session.closed", Kind.Closed],
];

export function kindOfType(name: string): Kind {
  for (const [suffix, kind] of SUFFIXES) if (name.endsWith(suffix)) return kind;
  return Kind.Other;
}

/**
 * Session ids are looked for as text (`"session": "<id>"`, with or without spaces, as the
 * honeypot wrote it) rather than parsed out of each event: a string search per event on the
 * writer's thread. Inside a JSON string a quote is always escaped, so `"session"` followed by
 * a colon is a key. Ids outside this alphabet (Cowrie's are 8 or 12 hex digits) are not sessions.
 */
const SESSION_KEY = '"session"';
export const SESSION_ID = /^[\w.:-]{1,64}$/;

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

export function sessionOf(data: string): string | null {
  const id = sessionText(data);
  return id !== null && SESSION_ID.test(id) ? id : null;
}

/** The text of the first `session` key, unchecked (checked once per new session). */
export function sessionText(data: string): string | null {
  for (let at = data.indexOf(SESSION_KEY); at >= 0; at = data.indexOf(SESSION_KEY, at + 1)) {
    let i = at + SESSION_KEY.length;
    while (isSpace(data.charCodeAt(i))) i++;
    if (data.charCodeAt(i) !== 58) continue; // a value "session", not the key
    i++;
    while (isSpace(data.charCodeAt(i))) i++;
    if (data.charCodeAt(i) !== 34) return null;
    const to = data.indexOf('"', i + 1);
    if (to < 0 || to - i - 1 > 64) return null;
    return data.slice(i + 1, to);
  }
  return null;
}

const SESSION_KEY_BYTES = Buffer.from(SESSION_KEY);

/**
 * Finds the session id of an event in a batch's bytes, the event's UTF-8 data being
 * `bytes[from, to)`: the writer gets its batch as bytes, and decoding every event into a
 * string only to find its id cost it more than the search. The id found is the one
 * `sessionText` reads from the decoded text: the key, colon, spaces and quotes are ASCII,
 * which UTF-8 never uses inside a longer character (a non-ASCII id is no session either way).
 */
export class SessionScan {
  /** Where the id found last is: `bytes[start, end)`. */
  start = 0;
  end = 0;

  /** `hint`: where the key occurs first at or after `from` (-1: nowhere), when the caller knows it. */
  find(bytes: Buffer, from: number, to: number, hint = bytes.indexOf(SESSION_KEY_BYTES, from)): boolean {
    for (let at = hint; at >= 0 && at < to; at = bytes.indexOf(SESSION_KEY_BYTES, at + 1)) {
      let i = at + SESSION_KEY.length;
      while (i < to && isSpace(bytes[i]!)) i++;
      if (i >= to || bytes[i] !== 58) continue; // a value "session", not the key
      i++;
      while (i < to && isSpace(bytes[i]!)) i++;
      if (i >= to || bytes[i] !== 34) return false;
      const end = bytes.indexOf(34, i + 1);
      if (end < 0 || end >= to || end - i - 1 > 64) return false;
      this.start = i + 1;
      this.end = end;
      return true;
    }
    return false;
  }
}

/** Where the session key occurs first at or after `from` in a batch's bytes, or -1. */
export function nextSessionKey(bytes: Buffer, from: number): number {
  return bytes.indexOf(SESSION_KEY_BYTES, from);
}

/** The id `SessionScan` found, as text (Latin-1: a non-ASCII id keeps its length and fails SESSION_ID). */
export function sessionAt(bytes: Buffer, scan: SessionScan): string {
  return bytes.toString("latin1", scan.start, scan.end);
}

/**
 * A session id as the writer's map key: Cowrie's ids (12 lowercase hex digits) as a number,
 * which costs neither a string per event nor a string's hashing (measured: ~0.1 µs per event
 * less); any other id as itself. The number holds the digits' value and count (at most 12
 * digits: 52 bits), so two ids have the same key only if they are the same.
 */
export type SessionKey = number | string;

/**
 * Each character's value as a lowercase hex digit, -1 for the others: a table lookup per
 * digit, where two range tests cost the writer ~30 ns more per event (measured on the bench's
 * batches: finding and keying an event's session 0.12 -> 0.08-0.09 µs).
 */
const HEX = new Int8Array(256).fill(-1);
for (let c = 48; c <= 57; c++) HEX[c] = c - 48;
for (let c = 97; c <= 102; c++) HEX[c] = c - 87;
const hexDigit = (c: number) => (c < 256 ? HEX[c]! : -1);

export function sessionKeyAt(bytes: Buffer, scan: SessionScan): SessionKey {
  const len = scan.end - scan.start;
  if (len > 0 && len <= 12) {
    let v = 0;
    let i = scan.start;
    for (; i < scan.end; i++) {
      const d = HEX[bytes[i]!]!;
      if (d < 0) break;
      v = v * 16 + d;
    }
    if (i === scan.end) return v * 16 + len;
  }
  return sessionAt(bytes, scan);
}

/** `sessionKeyAt` of an id given as text. */
export function sessionKey(session: string): SessionKey {
  const len = session.length;
  if (len > 0 && len <= 12) {
    let v = 0;
    let i = 0;
    for (; i < len; i++) {
      const d = hexDigit(session.charCodeAt(i));
      if (d < 0) break;
      v = v * 16 + d;
    }
    if (i === len) return v * 16 + len;
  }
  return session;
}

/** The credentials of a login event. */
export function credentials(text: string): { username: string | null; password: string | null } {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    return { username: typeof o.username === "string" ? o.username : null, password: typeof o.password === "string" ? o.password : null };
  } catch {
    return { username: null, password: null };
  }
}
