/**
 * HASSH, the fingerprint of an SSH client's algorithm offer (salesforce/hassh), as honeypots
 * log it: Cowrie's `cowrie.client.kex` has it in `hassh`. The stats count it (the `hassh`
 * counters) and the events filter on it. Only events named like Cowrie's (`<kind>.client.kex`)
 * are read for it: one per SSH connection, a small share of the events, so reading their data
 * costs the writer little, and the filter looks at no other event.
 */

const KEX_SUFFIX = ".client.kex";

/** The event types whose `hassh` is counted and filtered on. */
export function isKexType(name: string): boolean {
  return name.endsWith(KEX_SUFFIX);
}

/** A HASSH as the filter takes it: 32 hex digits (an MD5), any case. */
export const HASSH_PATTERN = "^[0-9a-fA-F]{32}$";

/** The top-level `hassh` text of an event's data; null when it has none (or is not JSON). */
export function hasshOf(data: string): string | null {
  if (!data.includes('"hassh"')) return null;
  try {
    const value = (JSON.parse(data) as { hassh?: unknown }).hassh;
    return typeof value === "string" && value !== "" ? value : null;
  } catch {
    return null;
  }
}
