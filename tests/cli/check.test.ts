/**
 * What CI and developers run before the tests: `npm run check` (tsc, then Biome's linter with
 * biome.jsonc), and only dependencies the code uses.
 */
import { expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

test("CI installs the locked dependencies, checks, then runs the README's test command", () => {
  const steps = readFileSync(join(ROOT, ".ci", "run"), "utf8").split("\n").filter((l) => /^npm /.test(l));
  expect(steps).toEqual(["npm ci --no-audit --no-fund", "npm run check", "npm test"]);
  expect(pkg.scripts.check).toBe("npm run typecheck && npm run lint");
});

test("the tree type-checks and lints clean", () => {
  // src/console is browser code with its own tsconfig (DOM, JSX).
  for (const argv of [["tsc", "--noEmit", "-p", "."], ["tsc", "--noEmit", "-p", "src/console"], ["biome", "lint", "--error-on-warnings", "."]]) {
    const r = Bun.spawnSync([join(ROOT, "node_modules", ".bin", argv[0]!), ...argv.slice(1)], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    expect({ argv, code: r.exitCode, output: r.exitCode === 0 ? "" : `${r.stdout}${r.stderr}` }).toEqual({ argv, code: 0, output: "" });
  }
}, 120_000);

test("every runtime dependency is imported by the code", () => {
  let code = "";
  const read = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) read(p);
      else if (/\.tsx?$/.test(e.name)) code += readFileSync(p, "utf8");
    }
  };
  read(join(ROOT, "src"));
  const unused = Object.keys(pkg.dependencies).filter((dep) => !new RegExp(`["'\`]${dep.replace(/[/.]/g, "\\$&")}["'/\`]`).test(code));
  expect(unused).toEqual([]);
});
