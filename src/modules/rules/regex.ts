/**
 * Rule regexes run on RE2 (re2js, its pure-JavaScript port; no native addon to build): a match
 * takes time linear in the text, whatever the pattern. JavaScript's RegExp backtracks, so an
 * attacker who chooses the text can make an operator's harmless-looking pattern take
 * exponential time on the thread that also acknowledges events and answers REST (issue 31:
 * `^(\w+\s?)*$` against 60 lines of "a"*40+"!" held it for 40 s). RE2 has no backreferences or
 * lookaround; a pattern using them is refused when the rule is defined.
 *
 * Linear is not free: when the pattern needs more DFA states than RE2 caches (`[ab]*a[ab]{60}$`)
 * it steps every instruction at every character, 0.1-0.3 µs each as measured here. The two
 * bounds below cap one match at MAX_PROGRAM x MAX_TEXT such steps.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from "re2js";

/** Instructions a compiled pattern may have: `x{n}` is n of them, `\b(wget|curl|tftp)\b` 20. */
export const MAX_PROGRAM = 1000;
/** Characters of a value a regex reads: its start, where a command's verb and its URL are. */
export const MAX_TEXT = 4096;

export class RegexError extends Error {
  override name = "RegexError";
}

const WHY = "(rule regexes use RE2 syntax, which matches in linear time: no backreferences, no lookaround)";

/** What RE2 cannot do, named from the fragment its parser stopped at. */
function unsupported(fragment: string): string | null {
  if (/^\\([1-9]|k<)/.test(fragment)) return `backreference \`${fragment.slice(0, 2)}\``;
  if (/^\(\?[=!]/.test(fragment)) return `lookahead \`${fragment.slice(0, 3)}\``;
  if (/^\(\?<[=!]/.test(fragment)) return `lookbehind \`${fragment.slice(0, 4)}\``;
  return null;
}

export function compileRegex(pattern: string, ignoreCase: boolean): (text: string) => boolean {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    if (!(e instanceof RE2JSException)) throw e;
    const what = e instanceof RE2JSSyntaxException ? unsupported(e.input ?? "") : null;
    throw new RegexError(what ? `${what} is not supported ${WHY}` : `invalid regular expression: ${e.message.replace(/^error parsing regexp: /, "")}`);
  }
  // `prog` is typed loosely by re2js; its size is what a match costs per character at worst.
  const size = (re.re2().prog as { numInst(): number }).numInst();
  if (size > MAX_PROGRAM) throw new RegexError(`the pattern compiles to ${size} RE2 instructions, more than ${MAX_PROGRAM} (a repetition x{n} counts n times)`);
  return (text) => re.test(text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text);
}
