/**
 * The layers, checked on every import of src/: storage never reaches up into Core, its
 * features or the cluster, the node agent and the honeypots never into Core or storage, and
 * the shared helpers into nothing above them. Core's features (src/modules/<feature>/) reach
 * one another, and everything else reaches them, only through a feature's index.ts or its
 * published shapes (schemas.ts, model.ts: TypeBox alone, which the console reads too); Core's
 * own services never reach a feature, only its composition root (src/core/index.ts) does.
 * A move that breaks this fails here with the file and line.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "../helpers";

const SRC = join(ROOT, "src");

/** Folder (or file) of src → the folders of src it must never import from. */
const FORBIDDEN: Record<string, string[]> = {
  db: ["core", "modules", "cluster", "cli", "node", "console", "honeypots"],
  node: ["core", "modules", "db", "cluster", "console"],
  honeypots: ["core", "modules", "db", "cluster", "cli", "node", "console"],
  catalogue: ["core", "modules", "db", "cluster", "cli", "node", "console"],
  geo: ["core", "modules", "db", "cluster", "cli", "node", "console", "honeypots"],
  protocol: ["core", "modules", "db", "cluster", "cli", "node", "console", "honeypots", "geo"],
  net: ["core", "modules", "db", "cluster", "cli", "node", "console", "honeypots", "geo"],
};

const MODULES = join(SRC, "modules");
/** Core's composition root: the one file of Core's own that starts the features. */
const CORE_ROOT = join(SRC, "core", "index.ts");

/** The feature a path of src/modules belongs to, or null. */
const featureOf = (path: string) => (path.startsWith(MODULES + "/") ? relative(MODULES, path).split("/")[0]!.replace(/\.tsx?$/, "") : null);

/** Why an import of `target` from `file` crosses a feature's boundary, or null when it does not. */
function featureBreach(file: string, target: string): string | null {
  const to = featureOf(target);
  const from = featureOf(file);
  const root = target === dirname(CORE_ROOT) || target.replace(/\.tsx?$/, "") === CORE_ROOT.replace(/\.ts$/, "");
  if (to === null) return from !== null && root ? "a feature imports Core's composition root" : null;
  if (from === to) return null;
  if (topOf(file) === "core" && file !== CORE_ROOT) return "Core's own services import a feature";
  const folder = join(MODULES, to);
  const published = ["index", "schemas", "model"].flatMap((f) => [join(folder, f), join(folder, `${f}.ts`)]);
  return target === folder || published.includes(target) ? null : `not through the feature's index or schemas (${to})`;
}

const topOf = (path: string) => relative(SRC, path).split("/")[0]!.replace(/\.tsx?$/, "");

test("no import runs back up the layers (db -> core, node -> core, a helper -> what uses it) or into a feature past its index and schemas", () => {
  const wrong: string[] = [];
  let checked = 0;
  for (const file of new Bun.Glob("**/*.{ts,tsx}").scanSync({ cwd: SRC, absolute: true })) {
    const forbidden = FORBIDDEN[topOf(file)] ?? [];
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
        const target = resolve(dirname(file), m[1]!);
        if (!target.startsWith(SRC)) continue;
        checked++;
        if (forbidden.includes(topOf(target))) wrong.push(`${relative(ROOT, file)}:${i + 1} imports ${relative(ROOT, target)}`);
        const breach = featureBreach(file, target);
        if (breach) wrong.push(`${relative(ROOT, file)}:${i + 1} imports ${relative(ROOT, target)}: ${breach}`);
      }
    });
  }
  expect(checked).toBeGreaterThan(200);
  expect(wrong).toEqual([]);
});
