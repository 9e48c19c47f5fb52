/** Times and windows in query strings, read alike by every feature that takes them. */
import { TIME_FORMS, parseTimeArg } from "../../time";
import { badRequest } from "./errors";

const WINDOW = /^([1-9][0-9]{0,4})([hd])$/;
const MAX_WINDOW_HOURS = 366 * 24;

/** A `since`/`until`-like parameter in any of the CLI's time forms, as ms since the epoch. */
export function timeParam(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseTimeArg(raw);
  if (ms === null) throw badRequest(`query parameter ${name} must be ${TIME_FORMS}; got ${JSON.stringify(raw)}`);
  return ms;
}

/** A `window` of hours or days (`24h`, `7d`) in ms. */
export function parseWindow(raw: string): number {
  const m = WINDOW.exec(raw);
  const hours = m ? Number(m[1]) * (m[2] === "d" ? 24 : 1) : NaN;
  if (!(hours <= MAX_WINDOW_HOURS)) throw badRequest(`window must be a number of hours or days like 24h or 7d (at most ${MAX_WINDOW_HOURS / 24}d), got ${JSON.stringify(raw)}`);
  return hours * 3_600_000;
}
