/**
 * GNU coreutils 9.1 `base64`, as Debian 12 ships it. Droppers send their script as
 * `echo <base64> | base64 -d | sh`, so the decoded text runs through the fake shell and its
 * downloads are recorded like typed ones.
 *
 * The fake filesystem holds text: input is encoded as UTF-8, and decoded bytes that are not UTF-8
 * come out as U+FFFD (a binary payload's content is not kept, as with wget's).
 */
import type { Command, CommandResult } from "../shell.ts";
import { readable } from "./files.ts";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const VALUE = new Map([...ALPHABET].map((c, i) => [c, i]));
const LONG_OPTIONS = ["decode", "ignore-garbage", "wrap", "help", "version"];
const TRY = "Try 'base64 --help' for more information.\n";

const HELP = `Usage: base64 [OPTION]... [FILE]
Base64 encode or decode FILE, or standard input, to standard output.

With no FILE, or when FILE is -, read standard input.

Mandatory arguments to long options are mandatory for short options too.
  -d, --decode          decode data
  -i, --ignore-garbage  when decoding, ignore non-alphabet characters
  -w, --wrap=COLS       wrap encoded lines after COLS character (default 76).
                          Use 0 to disable line wrapping
      --help        display this help and exit
      --version     output version information and exit

The data are encoded as described for the base64 alphabet in RFC 4648.
When decoding, the input may contain newlines in addition to the bytes of
the formal base64 alphabet.  Use --ignore-garbage to attempt to recover
from any other non-alphabet bytes in the encoded stream.

GNU coreutils online help: <https://www.gnu.org/software/coreutils/>
Report any translation bugs to <https://translationproject.org/team/>
Full documentation <https://www.gnu.org/software/coreutils/base64>
or available locally via: info '(coreutils) base64 invocation'
`;

const VERSION = `base64 (GNU coreutils) 9.1
Copyright (C) 2022 Free Software Foundation, Inc.
License GPLv3+: GNU GPL version 3 or later <https://gnu.org/licenses/gpl.html>.
This is free software: you are free to change and redistribute it.
There is NO WARRANTY, to the extent permitted by law.

Written by Simon Josefsson.
`;

/** Encoded text in lines of `wrap` characters (0: one line without a newline), as coreutils prints it. */
export function encodeBase64(bytes: Uint8Array, wrap: number): string {
  const flat = Buffer.from(bytes).toString("base64");
  if (wrap === 0 || flat === "") return flat;
  const lines: string[] = [];
  for (let i = 0; i < flat.length; i += wrap) lines.push(flat.slice(i, i + wrap));
  return `${lines.join("\n")}\n`;
}

/**
 * gnulib's decoder: newlines are skipped (with `ignoreGarbage`, everything outside the alphabet
 * but "="), then blocks of four are decoded, each ending early with "=" padding. It stops at the
 * first bad character or a short last block, keeping the bytes decoded until there.
 */
export function decodeBase64(text: string, ignoreGarbage: boolean): { bytes: Uint8Array; valid: boolean } {
  const chars = [...text].filter((c) => (ignoreGarbage ? VALUE.has(c) || c === "=" : c !== "\n"));
  const out: number[] = [];
  const valid = (() => {
    for (let i = 0; i < chars.length; i += 4) {
      const [a, b, c, d] = chars.slice(i, i + 4).map((ch) => (ch === "=" ? -1 : (VALUE.get(ch) ?? -2)));
      if (a === undefined || b === undefined || a < 0 || b < 0) return false;
      out.push(((a << 2) | (b >> 4)) & 0xff);
      if (c === undefined) return false;
      if (c === -1) {
        if (d !== -1) return false;
        continue;
      }
      if (c < 0) return false;
      out.push(((b << 4) | (c >> 2)) & 0xff);
      if (d === undefined || d === -2) return false;
      if (d === -1) continue;
      out.push(((c << 6) | d) & 0xff);
    }
    return true;
  })();
  return { bytes: Uint8Array.from(out), valid };
}

type Options = { decode: boolean; ignoreGarbage: boolean; wrap: number; operands: string[] } | { exit: CommandResult };

/** getopt_long over "diw:": options anywhere, clustered short ones, unique prefixes of long ones. */
function parseOptions(args: string[]): Options {
  const options = { decode: false, ignoreGarbage: false, wrap: 76, operands: [] as string[] };
  const usageError = (message: string) => ({ exit: { stderr: `base64: ${message}\n${TRY}`, status: 1 } });
  const setWrap = (value: string) => {
    // coreutils quotes the value with ‘…’ under the UTF-8 locale the box runs in.
    if (!/^\s*\+?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) return { exit: { stderr: `base64: invalid wrap size: ‘${value}’\n`, status: 1 } };
    options.wrap = Number(value);
    return null;
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      options.operands.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const [name, value] = arg.slice(2).split(/=(.*)/s, 2) as [string, string?];
      const matches = LONG_OPTIONS.filter((o) => o.startsWith(name));
      const option = LONG_OPTIONS.includes(name) ? name : matches.length === 1 ? matches[0] : undefined;
      // The long options start with five different letters, so a prefix is never ambiguous.
      if (option === undefined) return usageError(`unrecognized option '${arg}'`);
      if (option !== "wrap" && value !== undefined) return usageError(`option '--${option}' doesn't allow an argument`);
      if (option === "help") return { exit: { stdout: HELP } };
      if (option === "version") return { exit: { stdout: VERSION } };
      if (option === "decode") options.decode = true;
      else if (option === "ignore-garbage") options.ignoreGarbage = true;
      else {
        const wrap = value ?? args[++i];
        if (wrap === undefined) return usageError(`option '--wrap' requires an argument`);
        const bad = setWrap(wrap);
        if (bad) return bad;
      }
      continue;
    }
    if (!arg.startsWith("-") || arg === "-") {
      options.operands.push(arg);
      continue;
    }
    for (let j = 1; j < arg.length; j++) {
      const letter = arg.charAt(j);
      if (letter === "d") options.decode = true;
      else if (letter === "i") options.ignoreGarbage = true;
      else if (letter === "w") {
        const wrap = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
        if (wrap === undefined) return usageError("option requires an argument -- 'w'");
        const bad = setWrap(wrap);
        if (bad) return bad;
        break;
      } else return usageError(`invalid option -- '${letter}'`);
    }
  }
  return options;
}

const base64: Command = (shell, args, io) => {
  const options = parseOptions(args);
  if ("exit" in options) return options.exit;
  const [file = "-", extra] = options.operands;
  if (extra !== undefined) return { stderr: `base64: extra operand ‘${extra}’\n${TRY}`, status: 1 };
  let text = io.stdin;
  if (file !== "-") {
    // coreutils opens a directory fine and fails on the read.
    if (shell.fs.kind(shell.resolve(file)) === "dir") return { stderr: "base64: read error: Is a directory\n", status: 1 };
    const r = readable(shell, "base64", file);
    if ("error" in r) return { stderr: r.error, status: 1 };
    text = r.text;
  }
  if (!options.decode) return { stdout: encodeBase64(Buffer.from(text, "utf8"), options.wrap) };
  const { bytes, valid } = decodeBase64(text, options.ignoreGarbage);
  const stdout = new TextDecoder().decode(bytes);
  return valid ? { stdout } : { stdout, stderr: "base64: invalid input\n", status: 1 };
};

export const ENCODING_COMMANDS: Record<string, Command> = { base64 };
