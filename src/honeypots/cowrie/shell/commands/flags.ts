/** Splits "-la --all x" into single-letter and long flags and operands, as getopt would. */
export function flags(args: string[]): { short: Set<string>; long: Set<string>; operands: string[] } {
  const short = new Set<string>();
  const long = new Set<string>();
  const operands: string[] = [];
  let ended = false;
  for (const arg of args) {
    if (ended || arg === "-" || !arg.startsWith("-")) operands.push(arg);
    else if (arg === "--") ended = true;
    else if (arg.startsWith("--")) long.add(arg.slice(2));
    else for (const c of arg.slice(1)) short.add(c);
  }
  return { short, long, operands };
}

/** The value of `-n 5`, `-n5` or `-5` style numeric options (head, tail). */
export function countOption(args: string[], letter: string, fallback: number): { count: number; rest: string[] } {
  const rest: string[] = [];
  let count = fallback;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === `-${letter}` && i + 1 < args.length) count = Number.parseInt(args[++i]!, 10);
    else if (arg.startsWith(`-${letter}`)) count = Number.parseInt(arg.slice(2), 10);
    else if (/^-\d+$/.test(arg)) count = Number.parseInt(arg.slice(1), 10);
    else rest.push(arg);
  }
  return { count: Number.isFinite(count) ? Math.abs(count) : fallback, rest };
}
