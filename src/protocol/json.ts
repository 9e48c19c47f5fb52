/**
 * JSON with exact unsigned 64-bit integers.
 *
 * Existing nodes pick random u64 node ids, most of them above 2^53, where a JS number
 * silently rounds. We keep ids as `bigint` in memory and on the wire read them from the
 * literal's source text (`JSON.parse` reviver `context.source`) and write them back with
 * `JSON.rawJSON`, so the digits never pass through a double.
 */

type ReviverContext = { source?: string };

const INTEGER_LITERAL = /^\d+$/;

/** Keys whose integer values are u64 identifiers. */
const U64_KEYS = new Set(["node_id"]);

function reviveIds(this: unknown, key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value === "number" && U64_KEYS.has(key) && context?.source && INTEGER_LITERAL.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
}

/** Parses JSON, turning every `node_id` integer into an exact `bigint`. */
export function parseWithIds(text: string): unknown {
  return JSON.parse(text, reviveIds as (key: string, value: unknown) => unknown);
}

function writeBigInts(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? (JSON as unknown as { rawJSON(s: string): unknown }).rawJSON(value.toString()) : value;
}

/** Stringifies JSON, writing every `bigint` as an exact integer literal. */
export function stringify(value: unknown): string {
  return JSON.stringify(value, writeBigInts);
}

/** Accepts a u64 from a number, bigint or decimal string; returns null when it is not one. */
export function toU64(value: unknown): bigint | null {
  let n: bigint;
  if (typeof value === "bigint") n = value;
  else if (typeof value === "number" && Number.isSafeInteger(value)) n = BigInt(value);
  else if (typeof value === "string" && INTEGER_LITERAL.test(value) && value.length <= 20) n = BigInt(value);
  else return null;
  return n >= 0n && n <= 0xffff_ffff_ffff_ffffn ? n : null;
}
