/**
 * Array parameters of the writers' statements (`unnest($1::int8[], ...)`), as PostgreSQL's
 * array literals built here rather than by Bun's `sql.array`: that quotes and escapes each
 * element with a regular expression, which took about half of a cluster writer's CPU per
 * batch (profiled: ~4 µs per event, with a session upsert of 16 columns per batch). Numbers
 * and plain strings are joined natively here; only strings holding `"` or `\` are escaped
 * one by one. The literal is the same text `sql.array` sends; the statement casts it
 * (`${ints(xs)}::int4[]`).
 */

/** `{1,2,3}`; null and undefined as NULL. Bigints (BigInt64Array) too. */
export function ints(values: ArrayLike<number | bigint | null | undefined>): string {
  const n = values.length;
  if (n === 0) return "{}";
  // A typed array (no nulls): its own join.
  if (!Array.isArray(values)) return `{${(values as unknown as { join(sep: string): string }).join(",")}}`;
  for (let i = 0; i < n; i++) {
    if (values[i] == null) {
      let s = "{";
      for (let k = 0; k < n; k++) s += (k === 0 ? "" : ",") + (values[k] == null ? "NULL" : String(values[k]));
      return `${s}}`;
    }
  }
  return `{${values.join(",")}}`;
}

const ESCAPE = /[\\"]/g;

/** `{"a","b"}`; null and undefined as NULL; `"` and `\` escaped. */
export function texts(values: readonly (string | null | undefined)[]): string {
  const n = values.length;
  if (n === 0) return "{}";
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v !== "string" || v.includes('"') || v.includes("\\")) return quoted(values);
  }
  return `{"${values.join('","')}"}`;
}

function quoted(values: readonly (string | null | undefined)[]): string {
  let s = "{";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) s += ",";
    s += v == null ? "NULL" : `"${v.replace(ESCAPE, "\\$&")}"`;
  }
  return `${s}}`;
}
