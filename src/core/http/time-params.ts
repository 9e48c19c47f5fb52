/** Times and windows in query strings, read alike by every feature that takes them. */
import { TIME_FORMS, parseTimeArg } from "../../time";
import { badRequest } from "./errors";

const WINDOW = /^([1-9][0-9]{0,6})([mhd])$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** The longest window or range any operation takes. */
export const MAX_RANGE_DAYS = 366;
export const MAX_RANGE_MS = MAX_RANGE_DAYS * UNIT_MS.d;

/** A `since`/`until`-like parameter in any of the CLI's time forms, as ms since the epoch. */
export function timeParam(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseTimeArg(raw);
  if (ms === null) throw badRequest(`query parameter ${name} must be ${TIME_FORMS}; got ${JSON.stringify(raw)}`);
  return ms;
}

/** A `window` of minutes, hours or days (`15m`, `24h`, `7d`) in ms, at most MAX_RANGE_DAYS. */
export function parseWindow(raw: string): number {
  const m = WINDOW.exec(raw);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : NaN;
  if (!(ms <= MAX_RANGE_MS)) throw badRequest(`window must be a number of minutes, hours or days like 15m, 24h or 7d (at most ${MAX_RANGE_DAYS}d), got ${JSON.stringify(raw)}`);
  return ms;
}
