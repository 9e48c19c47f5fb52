/**
 * Nesting depth of JSON text, measured before it is parsed: a line of 100,000 brackets
 * parsed whole blocked the event loop for seconds, and every reader of it again (see
 * docs/protocol.md "Limits"). One pass over the text, no allocation.
 */

/**
 * True when objects and arrays in `text` nest deeper than `max` levels (the outermost value
 * is level 1). Brackets inside strings do not count; the text need not be valid JSON.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the string: its brackets are text.
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 34) break;
        if (d === 92) i++;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
  return false;
}
