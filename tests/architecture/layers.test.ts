/**
 * The layers, checked on every import of src/: storage never reaches up into Core or the
 * cluster, the node agent and the honeypots never into Core or storage, and the shared
 * helpers into nothing above them. A move that breaks this fails here with the file and line.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "../helpers";

const SRC = join(ROOT, "src");

/** Folder (or file) of src → the folders of src it must never import from. */
const FORBIDDEN: Record<string, string[]> = {
  db: ["core", "cluster", "cli", "node", "console", "honeypots"],
  node: ["core", "db", "cluster", "console"],
  honeypots: ["core", "db", "cluster", "cli", "node", "console"],
  catalogue: ["core", "db", "cluster", "cli", "node", "console"],
  geo: ["core", "db", "cluster", "cli", "node", "console", "honeypots"],
  protocol: ["core", "db", "cluster", "cli", "node", "console", "honeypots", "geo"],
  net: ["core", "db", "cluster", "cli", "node", "console", "honeypots", "geo"],
};

const topOf = (path: string) => relative(SRC, path).split("/")[0]!.replace(/\.tsx?$/, "");

test("no import runs back up the layers (db -> core, node -> core, a helper -> what uses it)", () => {
  const wrong: string[] = [];
  let checked = 0;
  for (const file of new Bun.Glob("**/*.{ts,tsx}").scanSync({ cwd: SRC, absolute: true })) {
    const forbidden = FORBIDDEN[topOf(file)];
    if (!forbidden) continue;
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
        const target = resolve(dirname(file), m[1]!);
        if (!target.startsWith(SRC)) continue;
        checked++;
        if (forbidden.includes(topOf(target))) wrong.push(`${relative(ROOT, file)}:${i + 1} imports ${relative(ROOT, target)}`);
      }
    });
  }
  expect(checked).toBeGreaterThan(200);
  expect(wrong).toEqual([]);
});
