/**
 * The part of bash's grammar that bots use: words with quotes and escapes, $VAR and $(...)
 * expansions, pipes, `;` `&&` `||` `&` lists, and redirections. Loops, functions and here-docs are
 * out of scope; they parse as plain words and end as "command not found", which is logged.
 *
 * Words keep their expansions unexpanded: bash expands each command just before running it, so
 * in `cd /tmp; echo $PWD` the second command sees the first one's effect.
 */

/** A piece of a word: literal text, or an expansion; `quoted` expansions are not split into fields. */
export type Part = { kind: "text"; value: string; quoted: boolean } | { kind: "var"; name: string; quoted: boolean } | { kind: "sub"; command: string; quoted: boolean };

export type Word = Part[];

export interface Redirect {
  fd: 0 | 1 | 2;
  /** ">" truncates, ">>" appends, "<" reads, ">&" duplicates onto the target fd. */
  op: ">" | ">>" | "<" | ">&";
  target: Word;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
}

export interface ListItem {
  /** How this pipeline is joined to the previous one. */
  connector: ";" | "&&" | "||";
  pipeline: SimpleCommand[];
}

export type Parsed = { ok: true; list: ListItem[] } | { ok: false; token: string };

type Token = { kind: "word"; parts: Word } | { kind: "op"; value: string };

const OPERATORS = ["&&", "||", ">>", ">&", "&>", ";", "&", "|", ">", "<", "\n"];
const NAME = /^(?:\{([A-Za-z_][A-Za-z0-9_]*|[?$#0-9])\}|([A-Za-z_][A-Za-z0-9_]*|[?$#0-9]))/;

/** The index just past the `)` closing a `$(` whose body starts at `from`. */
function closingParen(line: string, from: number): number {
  let depth = 1;
  let quote = "";
  for (let i = from; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return line.length;
}

function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let parts: Word = [];
  let inWord = false;
  const text = (value: string, quoted: boolean) => {
    const last = parts.at(-1);
    if (last?.kind === "text" && last.quoted === quoted) last.value += value;
    else parts.push({ kind: "text", value, quoted });
    inWord = true;
  };
  const endWord = () => {
    if (inWord) tokens.push({ kind: "word", parts });
    parts = [];
    inWord = false;
  };
  /** Reads the expansion at `i` (a `$`) and returns the index after it. */
  const dollar = (i: number, quoted: boolean): number => {
    inWord = true;
    if (line[i + 1] === "(") {
      const end = closingParen(line, i + 2);
      parts.push({ kind: "sub", command: line.slice(i + 2, end - 1), quoted });
      return end;
    }
    const name = NAME.exec(line.slice(i + 1));
    if (!name) {
      text("$", quoted);
      return i + 1;
    }
    const [whole, braced, bare] = name;
    // NAME's two alternatives each capture the name, so exactly one of the groups is set.
    parts.push({ kind: "var", name: braced ?? bare ?? "", quoted });
    return i + 1 + whole.length;
  };

  let i = 0;
  while (i < line.length) {
    const c = line.charAt(i);
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
    } else if (c === "#" && !inWord) {
      const nl = line.indexOf("\n", i);
      i = nl === -1 ? line.length : nl;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      const stop = end === -1 ? line.length : end;
      text(line.slice(i + 1, stop), true);
      i = stop + 1;
    } else if (c === '"') {
      text("", true);
      i++;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === "\\" && i + 1 < line.length && '"\\$`'.includes(line.charAt(i + 1))) {
          text(line.charAt(i + 1), true);
          i += 2;
        } else if (line[i] === "$") i = dollar(i, true);
        else text(line.charAt(i++), true);
      }
      i++;
    } else if (c === "\\") {
      if (i + 1 < line.length && line[i + 1] !== "\n") text(line.charAt(i + 1), true);
      i += 2;
    } else if (c === "$") {
      i = dollar(i, false);
    } else if (c === "`") {
      const end = line.indexOf("`", i + 1);
      const stop = end === -1 ? line.length : end;
      parts.push({ kind: "sub", command: line.slice(i + 1, stop), quoted: false });
      inWord = true;
      i = stop + 1;
    } else {
      const op = OPERATORS.find((o) => line.startsWith(o, i));
      if (!op) {
        text(c, false);
        i++;
        continue;
      }
      // "2>" and "1>": a bare digit right before a redirection names the fd.
      const [first] = parts;
      const digit = parts.length === 1 && first?.kind === "text" && !first.quoted && /^[012]$/.test(first.value) ? first.value : "";
      if ((op[0] === ">" || op === "<") && digit) {
        parts = [];
        inWord = false;
        tokens.push({ kind: "op", value: `${digit}${op}` });
      } else {
        endWord();
        tokens.push({ kind: "op", value: op });
      }
      i += op.length;
    }
  }
  endWord();
  return tokens;
}

function redirectOf(op: string, target: Word): Redirect[] {
  if (op === "&>") return [{ fd: 1, op: ">", target }, { fd: 2, op: ">&", target: [{ kind: "text", value: "1", quoted: false }] }];
  const fd = /^[012]/.test(op) ? (Number(op[0]) as 0 | 1 | 2) : op === "<" ? 0 : 1;
  return [{ fd, op: op.replace(/^[012]/, "") as Redirect["op"], target }];
}

export function parseLine(line: string): Parsed {
  const tokens = tokenize(line);
  const list: ListItem[] = [];
  let connector: ListItem["connector"] = ";";
  let pipeline: SimpleCommand[] = [];
  let command: SimpleCommand = { words: [], redirects: [] };
  const empty = () => command.words.length === 0 && command.redirects.length === 0;

  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t]!;
    if (token.kind === "word") {
      command.words.push(token.parts);
      continue;
    }
    const op = token.value;
    if (op.includes(">") || op.includes("<")) {
      const next = tokens[t + 1];
      if (next?.kind !== "word") return { ok: false, token: next?.kind === "op" ? next.value : "newline" };
      command.redirects.push(...redirectOf(op, next.parts));
      t++;
      continue;
    }
    if (empty()) {
      // A separator after nothing is bash's syntax error; blank lines are not.
      if (op === "\n" && pipeline.length === 0) continue;
      return { ok: false, token: op === "\n" ? "newline" : op };
    }
    pipeline.push(command);
    command = { words: [], redirects: [] };
    if (op === "|") continue;
    list.push({ connector, pipeline });
    pipeline = [];
    connector = op === "&&" || op === "||" ? op : ";";
  }
  if (!empty()) pipeline.push(command);
  if (pipeline.length > 0) list.push({ connector, pipeline });
  return { ok: true, list };
}

export interface Expander {
  variable(name: string): string;
  /** Runs a command substitution and returns its output. */
  substitute(command: string): string;
}

/**
 * Expands a word into fields as bash does: unquoted expansions are split on blanks (so
 * `echo $(cat /proc/cpuinfo | head -2)` prints one line), quoted ones and literal text are not,
 * and an unquoted expansion that comes out empty leaves no field at all.
 */
export function expandWord(word: Word, expander: Expander, split = true): string[] {
  const fields: string[] = [];
  let current = "";
  let present = false;
  for (const part of word) {
    if (part.kind === "text") {
      current += part.value;
      present ||= part.value !== "" || part.quoted;
      continue;
    }
    const value = part.kind === "var" ? expander.variable(part.name) : expander.substitute(part.command).replace(/\n+$/, "");
    if (part.quoted || !split) {
      current += value;
      present = true;
      continue;
    }
    value.split(/[ \t\n]+/).forEach((piece, i) => {
      if (i > 0) {
        if (present) fields.push(current);
        current = "";
        present = false;
      }
      current += piece;
      present ||= piece !== "";
    });
  }
  if (present) fields.push(current);
  return fields;
}

/** An assignment word (`X=1`, `X=$(cmd)`) is expanded without splitting, as bash does. */
export function isAssignment(word: Word): boolean {
  const first = word[0];
  return first?.kind === "text" && !first.quoted && /^[A-Za-z_][A-Za-z0-9_]*=/.test(first.value);
}
