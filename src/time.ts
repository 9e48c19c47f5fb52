/**
 * Points in time as operators write them, read the same way by the CLI (`--since`) and by
 * REST (`?since=`): one function, so a value that works in one works in the other.
 */

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const AGE = /^(\d{1,9}) ?([smhd])$/;
const NUMBER = /^\d{1,16}(\.\d{1,9})?$/;
// RFC 3339, with the ISO 8601 liberties people type: a space for `T`, no seconds, no zone (UTC).
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2})?(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})?)?$/i;
/** Unix time in seconds below this, milliseconds from here (1e11 s is the year 5138, 1e11 ms is 1973). */
const SECONDS_LIMIT = 1e11;
const MAX_MS = 8.64e15;

export const TIME_FORMS = "an RFC 3339 time (2026-11-22T01:07:41Z), unix seconds, or an age such as 30s, 15m, 2h, 7d";

/** Milliseconds since the epoch, or null when `value` is none of TIME_FORMS. */
export function parseTimeArg(text: string, now = Date.now()): number | null {
  const value = text.trim();
  let ms: number;
  const age = AGE.exec(value);
  const dt = age ? null : DATE_TIME.exec(value);
  if (age) ms = now - Number(age[1]) * UNITS[age[2]!]!;
  else if (NUMBER.test(value)) {
    const n = Number(value);
    ms = n < SECONDS_LIMIT ? n * 1000 : n;
  } else if (dt) {
    const [, date, hm, sec, frac, zone] = dt;
    // Date.parse rolls 2026-02-30 over into March; a day that does not exist is a typo.
    const [y, mo, d] = date!.split("-").map(Number);
    if (new Date(Date.UTC(y!, mo! - 1, d!)).getUTCDate() !== d) return null;
    const z = zone === undefined ? "Z" : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone.toUpperCase();
    ms = Date.parse(hm === undefined ? `${date}T00:00:00Z` : `${date}T${hm}${sec ?? ":00"}${(frac ?? "").slice(0, 4)}${z}`);
  } else return null;
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_MS) return null;
  return Math.round(ms);
}
