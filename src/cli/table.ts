/**
 * Plain-text tables for the CLI's human output. Pure: takes rows, returns a string.
 *
 * Cells are sanitised because much of what the CLI shows (usernames, passwords, shell input)
 * is typed by attackers: a raw ESC or CSI byte would let them drive the operator's terminal.
 */

export interface Column<R> {
  header: string;
  value: (row: R) => string;
  /** Right-align (numbers). */
  right?: boolean;
  /** Cut this column first when the table is wider than `width`. */
  shrink?: boolean;
  /** A shrunk column wraps its text onto more lines instead of cutting it. */
  wrap?: boolean;
  /** Narrowest a shrunk column gets (default: its header, at least 8). */
  min?: number;
}

// C0 controls, DEL and C1 controls (0x9b is a one-byte CSI on some terminals).
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** Makes untrusted text safe and one-line for a terminal: control characters become escapes. */
export function clean(text: string): string {
  return text.replace(CONTROL, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
}

/**
 * What the CLI writes to a terminal, whatever the path (tables, progress, results, errors):
 * control characters escaped as `clean` does, line breaks kept. Text from Core is not the
 * operator's (node names, a node's command messages, attackers' input): a node that answers
 * `\e]0;...\a\e[2J` must not retitle or clear the operator's terminal.
 */
export function terminalText(text: string): string {
  return text.split("\n").map(clean).join("\n");
}

/** Shortens text to `max` characters, marking the cut. */
export function truncate(text: string, max: number): string {
  if (max <= 0) return "";
  return text.length <= max ? text : max === 1 ? "…" : text.slice(0, max - 1) + "…";
}

/**
 * Renders a table with a header row, two spaces between columns and no trailing blanks. With a
 * `width` (the terminal's), shrinkable columns are cut so that each line fits.
 */
export function renderTable<R>(columns: Column<R>[], rows: R[], width?: number): string {
  const cells = rows.map((r) => columns.map((c) => clean(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  if (width !== undefined) {
    const total = widths.reduce((a, b) => a + b, 0) + 2 * (columns.length - 1);
    let excess = total - width;
    for (let i = columns.length - 1; i >= 0 && excess > 0; i--) {
      if (!columns[i]!.shrink) continue;
      const min = columns[i]!.min ?? Math.max(columns[i]!.header.length, 8);
      const cut = Math.min(excess, widths[i]! - min);
      if (cut > 0) {
        widths[i]! -= cut;
        excess -= cut;
      }
    }
  }
  const line = (values: string[]) =>
    values
      .map((v, i) => {
        const text = truncate(v, widths[i]!);
        return columns[i]!.right ? text.padStart(widths[i]!) : text.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  // A row whose wrapping cells need more lines continues below, the other cells blank.
  const rowLines = (values: string[]) => {
    const parts = values.map((v, i) => (columns[i]!.wrap ? wrapText(v, widths[i]!) : [v]));
    const height = Math.max(...parts.map((p) => p.length));
    return Array.from({ length: height }, (_, n) => line(parts.map((p) => p[n] ?? "")));
  };
  return [line(columns.map((c) => c.header)), ...cells.flatMap(rowLines)].join("\n");
}

/**
 * Breaks text into lines of at most `width` characters: at spaces, else after commas (lists
 * such as credentials), else anywhere.
 */
export function wrapText(text: string, width: number): string[] {
  if (width <= 0) return [text];
  const lines: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const space = rest.lastIndexOf(" ", width);
    const comma = rest.lastIndexOf(",", width - 1);
    const cut = space > 0 ? space : comma > 0 ? comma + 1 : width;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  lines.push(rest);
  return lines;
}

/** `key: value` lines with the keys aligned, for one object; with a `width`, values wrap under themselves. */
export function renderFields(fields: [string, string][], width?: number): string {
  const w = Math.max(0, ...fields.map(([k]) => k.length));
  return fields
    .map(([k, v]) => {
      const [first, ...more] = width === undefined ? [clean(v)] : wrapText(clean(v), width - w - 2);
      return [`${(k + ":").padEnd(w + 1)} ${first}`.trimEnd(), ...more.map((m) => " ".repeat(w + 2) + m)].join("\n");
    })
    .join("\n");
}
