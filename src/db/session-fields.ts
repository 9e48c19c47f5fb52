/**
 * What an event says about its session, read from its data text on the event writer's thread
 * (see session-tracker.ts): the session id and, by its type, what it adds to the session.
 */

/** What an event type adds to its session's summary. */
export const Kind = { Other: 0, LoginSuccess: 1, Command: 2, File: 3, TtyLog: 4, Closed: 5 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

const KINDS: Record<string, Kind> = {
  "cowrie.login.success": Kind.LoginSuccess,
  "cowrie.command.input": Kind.Command,
  "cowrie.session.file_download": Kind.File,
  "cowrie.session.file_upload": Kind.File,
  "cowrie.log.closed": Kind.TtyLog,
  "cowrie.session.closed": Kind.Closed,
};

export function kindOfType(name: string): Kind {
  return KINDS[name] ?? Kind.Other;
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

/** The credentials of a login event. */
export function credentials(text: string): { username: string | null; password: string | null } {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    return { username: typeof o.username === "string" ? o.username : null, password: typeof o.password === "string" ? o.password : null };
  } catch {
    return { username: null, password: null };
  }
}
