/**
 * The tcp kind's own config values: the list of ports to listen on and the banner of each.
 *
 * A listener is named in the ready line and in `banners` by the port it was asked for:
 * `tcp-8000` for port 8000. Port "0" (any free port, for tests) may appear several times, so
 * the n-th "0" of the list is named by its rank among them instead: `tcp-any-0`, `tcp-any-1`...
 * (never `tcp-0`, `tcp-1`, which would be the names of ports 0 and 1).
 */
import { ConfigError } from "../shared/config.ts";

/** Each listener is a socket and a file descriptor; more ports than this belong behind a redirect (docs). */
export const MAX_LISTENERS = 1024;
/** A banner is a greeting line or a short binary hello, never a file. */
export const MAX_BANNER_BYTES = 4096;
/** The hard ceiling of first_bytes: an event carries them twice (hex and printable), within a relay line's 1 MiB. */
export const MAX_FIRST_BYTES = 65536;

export interface PortEntry {
  /** The listener's name in the ready line: `tcp-<port>` or `tcp-any-<n>`. */
  name: string;
  /** The same without `tcp-`: what `banners` calls it. */
  key: string;
  /** The port asked for; 0 is any free port. */
  port: number;
}

function port(text: string): number {
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= 65535)) throw new ConfigError(`config key ports: "${text}" is not a port 0-65535`);
  return n;
}

/** "8000-8010,9200,0": single ports and ranges separated by commas; spaces are ignored. */
export function parsePorts(spec: string): PortEntry[] {
  const entries: PortEntry[] = [];
  const seen = new Set<number>();
  let anyCount = 0;
  const add = (n: number) => {
    if (entries.length >= MAX_LISTENERS) throw new ConfigError(`config key ports: more than ${MAX_LISTENERS} ports`);
    if (n === 0) {
      const key = `any-${anyCount++}`;
      entries.push({ name: `tcp-${key}`, key, port: 0 });
      return;
    }
    if (seen.has(n)) throw new ConfigError(`config key ports: port ${n} is listed twice`);
    seen.add(n);
    entries.push({ name: `tcp-${n}`, key: String(n), port: n });
  };
  for (const raw of spec.split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    const range = /^(\d+)\s*-\s*(\d+)$/.exec(item);
    if (!range) {
      add(port(item));
      continue;
    }
    const [from, to] = [port(range[1]!), port(range[2]!)];
    if (from === 0 || to < from) throw new ConfigError(`config key ports: "${item}" is not a range of ports from low to high`);
    if (to - from + 1 > MAX_LISTENERS) throw new ConfigError(`config key ports: more than ${MAX_LISTENERS} ports`);
    for (let n = from; n <= to; n++) add(n);
  }
  if (entries.length === 0) throw new ConfigError("config key ports: no port given");
  return entries;
}

/**
 * `banners`: a JSON object from a listener's key ("8000", "any-0") or "*" (every other port) to
 * the bytes it sends. Each character of a banner is one byte (U+0000-U+00FF), so a binary hello
 * is written with \u00XX escapes and a text one with JSON's own \r\n.
 */
export function parseBanners(spec: string, entries: PortEntry[]): Map<string, Buffer> {
  const banners = new Map<string, Buffer>();
  if (spec.trim() === "") return banners;
  let parsed: unknown;
  try {
    parsed = JSON.parse(spec);
  } catch (err) {
    throw new ConfigError(`config key banners is not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigError("config key banners must be a JSON object");
  const keys = new Set(entries.map((e) => e.key));
  for (const [key, value] of Object.entries(parsed)) {
    if (key !== "*" && !keys.has(key)) throw new ConfigError(`config key banners: "${key}" is not one of the listened ports`);
    if (typeof value !== "string") throw new ConfigError(`config key banners: the banner of "${key}" must be a string`);
    if ([...value].some((c) => c.charCodeAt(0) > 0xff)) throw new ConfigError(`config key banners: the banner of "${key}" has a character above U+00FF (one character is one byte)`);
    if (value.length > MAX_BANNER_BYTES) throw new ConfigError(`config key banners: the banner of "${key}" is longer than ${MAX_BANNER_BYTES} bytes`);
    if (value.length > 0) banners.set(key, Buffer.from(value, "latin1"));
  }
  return banners;
}

/** A whole number in [min, max], for the kind's numeric keys that may be 0 or have a ceiling. */
export function parseBounded(key: string, value: string, min: number, max: number): number {
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw new ConfigError(`config key ${key} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}
