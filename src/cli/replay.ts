/**
 * Playing an asciicast v2 recording (a session's terminal) back. Pure parts: reading the file,
 * the schedule of writes, and what of the recorded output may reach the operator's terminal.
 *
 * The output is what the honeypot sent the attacker, and it echoes what the attacker typed:
 * a replay must not let them drive the operator's terminal (set its title, make it answer a
 * query into its input, switch on mouse reporting). So only the sequences a shell session
 * needs to look right pass as they are: text, CR, LF, TAB, BS, and CSI sequences that move
 * the cursor, erase and set colours. Everything else is shown escaped, as `clean` does.
 */
import { clean } from "./table";

export interface Cast {
  header: { version: number; width?: number; height?: number; timestamp?: number; idle_time_limit?: number; [k: string]: unknown };
  /** Output events: seconds from the start, data. */
  output: [number, string][];
}

export class CastError extends Error {}

export function parseCast(text: string): Cast {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) throw new CastError("the recording is empty");
  let header: Cast["header"];
  try {
    header = JSON.parse(lines[0]!);
  } catch {
    throw new CastError("the recording's first line is not an asciicast header");
  }
  if (header?.version !== 2) throw new CastError(`the recording is asciicast version ${String(header?.version)}; only version 2 is played`);
  const output: [number, string][] = [];
  for (const line of lines.slice(1)) {
    let ev: unknown;
    try {
      ev = JSON.parse(line);
    } catch {
      throw new CastError(`the recording holds a line that is not JSON: ${clean(line.slice(0, 60))}`);
    }
    if (!Array.isArray(ev) || typeof ev[0] !== "number" || typeof ev[2] !== "string") throw new CastError(`the recording holds a line that is not an event: ${clean(line.slice(0, 60))}`);
    if (ev[1] === "o") output.push([ev[0], ev[2]]);
  }
  return { header, output };
}

/**
 * When each output is written, in ms from the start of the replay: the recorded pauses
 * divided by `speed`, each at most `maxIdle` seconds (before dividing) when given.
 */
export function schedule(output: [number, string][], speed: number, maxIdle: number | null): number[] {
  const at: number[] = [];
  let last = 0;
  let t = 0;
  for (const [time] of output) {
    let pause = Math.max(0, time - last);
    if (maxIdle !== null) pause = Math.min(pause, maxIdle);
    t += (pause * 1000) / speed;
    last = time;
    at.push(t);
  }
  return at;
}

// CSI: ESC [ parameters intermediates final. Finals that move the cursor, erase, insert and
// delete, scroll and set colours; `h`/`l` only for the modes a shell uses.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal control sequences is its purpose.
const CSI = /^\u001b\[([0-9;?]*)([ -/]*)([@-~])/;
const SAFE_FINALS = new Set("@ABCDEFGHJKLMPSTXZdefgmr".split(""));
const SAFE_MODES = new Set(["?25", "?7", "?12", "?1049", "?1047", "?47", "4", "?2004"]);

/** The recorded output as it may be written to the operator's terminal (see above). */
export function safeOutput(data: string): string {
  let out = "";
  for (let i = 0; i < data.length; ) {
    const c = data.charCodeAt(i);
    if (c === 0x1b) {
      const m = CSI.exec(data.slice(i, i + 64));
      if (m && m[2] === "" && (SAFE_FINALS.has(m[3]!) || ((m[3] === "h" || m[3] === "l") && m[1]!.split(";").every((p) => SAFE_MODES.has(p))))) {
        out += m[0];
        i += m[0].length;
        continue;
      }
      out += "\\x1b";
      i++;
      continue;
    }
    // C1 controls (0x80-0x9f) are escaped too: 0x9b is a one-byte CSI on some terminals.
    const plain = c === 13 || c === 10 || c === 9 || c === 8 || (c >= 0x20 && (c < 0x7f || c > 0x9f));
    out += plain ? data[i] : clean(data[i]!);
    i++;
  }
  return out;
}

/** The modes `safeOutput` lets through, as a terminal starts: what a replay must leave as it found. */
const MODE_DEFAULTS = new Map<string, boolean>([
  ["?1049", false],
  ["?1047", false],
  ["?47", false],
  ["?25", true],
  ["?7", true],
  ["?12", false],
  ["4", false],
  ["?2004", false],
]);
const ALTERNATE_SCREENS = ["?1049", "?1047", "?47"];
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal control sequences is its purpose.
const PASSED_CSI = /\u001b\[([0-9;?]*)([hlmr])/g;

/**
 * Follows the modes, the scroll region and the colours that the replayed output changed, so
 * that a replay that ends (or is interrupted) mid-way through a full-screen program does not
 * leave the operator's terminal on the alternate screen, with no cursor or concealed text.
 * It reads what `safeOutput` returned: every ESC there starts a whole sequence it let through.
 */
export class TerminalModes {
  private readonly modes = new Map<string, boolean>();
  private region = false;
  private attributes = false;

  feed(passed: string): void {
    for (const [, params, final] of passed.matchAll(PASSED_CSI)) {
      if (final === "h" || final === "l") for (const p of params!.split(";")) this.modes.set(p, final === "h");
      else if (final === "r") this.region = params !== "";
      else this.attributes = sgrLeavesAttributes(params!);
    }
  }

  /** What puts every changed mode back: empty when nothing was left changed. */
  resets(): string {
    const changed = (m: string) => this.modes.has(m) && this.modes.get(m) !== MODE_DEFAULTS.get(m);
    let out = "";
    // First off the alternate screen: what follows then applies to the operator's own screen.
    for (const m of ALTERNATE_SCREENS) if (changed(m)) out += `\u001b[${m}l`;
    // Resetting the scroll region moves the cursor home: saved and restored around it.
    if (this.region) out += "\u001b7\u001b[r\u001b8";
    for (const [m, on] of MODE_DEFAULTS) if (!ALTERNATE_SCREENS.includes(m) && changed(m)) out += `\u001b[${m}${on ? "h" : "l"}`;
    // Last: leaving the alternate screen (and DECRC) restores the attributes saved before.
    if (this.attributes || out !== "") out += "\u001b[0m";
    return out;
  }
}

/** Whether an SGR sequence leaves any attribute set (a colour index of 0 is not a reset). */
function sgrLeavesAttributes(params: string): boolean {
  const ps = params.split(";");
  let set = false;
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i] === "" ? 0 : Number(ps[i]);
    if (p === 0) set = false;
    else {
      set = true;
      // 38/48/58: extended colours, 5;index or 2;r;g;b.
      if ((p === 38 || p === 48 || p === 58) && i + 1 < ps.length) i += ps[i + 1] === "5" ? 2 : ps[i + 1] === "2" ? 4 : 1;
    }
  }
  return set;
}
