/**
 * Redis's glob-style patterns (KEYS, SCAN MATCH, CONFIG GET): `*`, `?`, `[abc]`, `[^a]`, `[a-z]`,
 * and `\x` for a literal x. Matching is byte for byte over Latin-1 strings (a Redis key is bytes).
 * The patterns come from attackers, so the work one match may do is bounded: past `budget` steps
 * it gives up and answers no match.
 */

const DEFAULT_BUDGET = 1_000_000;

const lower = (c: number, nocase: boolean) => (nocase && c >= 0x41 && c <= 0x5a ? c + 32 : c);

/**
 * Matches the bracket class that opens at pattern[p] ('[') against byte c.
 * Returns whether it matched and the index just past the class (an unclosed class ends the pattern).
 */
function matchClass(pattern: string, p: number, c: number, nocase: boolean): { match: boolean; next: number } {
  let i = p + 1;
  const negate = pattern[i] === "^";
  if (negate) i++;
  let match = false;
  const ch = lower(c, nocase);
  while (i < pattern.length && pattern[i] !== "]") {
    if (pattern[i] === "\\" && i + 1 < pattern.length) {
      i++;
      if (pattern.charCodeAt(i) === c) match = true;
      i++;
    } else if (i + 2 < pattern.length && pattern[i + 1] === "-") {
      let start = lower(pattern.charCodeAt(i), nocase);
      let end = lower(pattern.charCodeAt(i + 2), nocase);
      if (start > end) [start, end] = [end, start];
      if (ch >= start && ch <= end) match = true;
      i += 3;
    } else {
      if (lower(pattern.charCodeAt(i), nocase) === ch) match = true;
      i++;
    }
  }
  return { match: negate ? !match : match, next: Math.min(i + 1, pattern.length) };
}

/** One pattern element matched against one byte; `next` is where the pattern goes on. */
function step(pattern: string, p: number, c: number, nocase: boolean): { match: boolean; next: number } {
  const token = pattern[p];
  if (token === "?") return { match: true, next: p + 1 };
  if (token === "[") return matchClass(pattern, p, c, nocase);
  const at = token === "\\" && p + 1 < pattern.length ? p + 1 : p;
  return { match: lower(pattern.charCodeAt(at), nocase) === lower(c, nocase), next: at + 1 };
}

/**
 * Greedy matching with one backtrack point at the last `*` seen: linear in practice, never
 * exponential, since a later `*` makes every earlier choice final.
 */
export function globMatch(pattern: string, text: string, nocase = false, budget = DEFAULT_BUDGET): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  let steps = 0;
  while (s < text.length) {
    if (++steps > budget) return false;
    if (p < pattern.length && pattern[p] === "*") {
      while (pattern[p] === "*") p++;
      if (p === pattern.length) return true;
      starP = p;
      starS = s;
      continue;
    }
    if (p < pattern.length) {
      const r = step(pattern, p, text.charCodeAt(s), nocase);
      if (r.match) {
        p = r.next;
        s++;
        continue;
      }
    }
    if (starP === -1) return false;
    p = starP;
    s = ++starS;
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}
