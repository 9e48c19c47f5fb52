/**
 * docker/ cannot be built on these machines (no Docker engine), so its consistency with the
 * program is checked here: every flag, command and HONEYBEE_* variable it uses exists.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CoreConfig } from "../../src/config";
import { NodeConfig } from "../../src/node/config";
import { ROOT } from "../helpers";

const read = (...p: string[]) => readFileSync(join(ROOT, ...p), "utf8");
const dockerfile = read("docker", "Dockerfile");
const composeText = read("docker", "compose.yaml");
const compose = Bun.YAML.parse(composeText) as { services: Record<string, { command: string[]; environment?: Record<string, string>; ports?: string[] }> };

/** Each command's options, from the generated command-line reference (checked current by docs.test.ts). */
function optionsOf(command: string): string[] {
  const cli = read("docs", "cli.md");
  const section = cli.split(`\n## honeybee ${command}\n`)[1]?.split("\n## ")[0] ?? "";
  return [...section.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]!);
}

const KNOWN_ENV = new Set([
  ...Object.keys(CoreConfig.properties).map((k) => `HONEYBEE_${k.toUpperCase()}`),
  ...Object.keys(NodeConfig.properties).map((k) => `HONEYBEE_${k.toUpperCase()}`),
  "HONEYBEE_API",
  "HONEYBEE_WS",
  "HONEYBEE_TOKEN",
]);

describe("docker/", () => {
  test("compose runs one Core and one node with flags the program has", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["core", "node"]);
    for (const { command } of Object.values(compose.services)) {
      const [sub, ...args] = command;
      const flags = args.filter((a) => a.startsWith("--"));
      expect({ sub, unknown: flags.filter((f) => !optionsOf(sub!).includes(f)) }).toEqual({ sub, unknown: [] });
    }
    expect(compose.services.core!.ports).toEqual(["127.0.0.1:9002:9002", "127.0.0.1:9003:9003"]);
    expect(compose.services.node!.command).toContain("core:9001");
  });

  test("the commands in the comments are commands of the CLI with its flags", () => {
    const lines = [...composeText.matchAll(/exec core honeybee (.*)$/gm)].map((m) => m[1]!.split(/\s+/));
    expect(lines.length).toBeGreaterThan(2);
    for (const [sub, ...args] of lines) {
      const flags = args.filter((a) => a.startsWith("-")).map((f) => (f === "-c" ? "--config" : f));
      expect({ sub, unknown: flags.filter((f) => !optionsOf(sub!).includes(f)) }).toEqual({ sub, unknown: [] });
    }
  });

  test("every HONEYBEE_* variable is a configuration key", () => {
    const used = new Set([...`${dockerfile}\n${composeText}`.matchAll(/HONEYBEE_[A-Z_]+/g)].map((m) => m[0]));
    expect([...used].filter((v) => !KNOWN_ENV.has(v))).toEqual([]);
  });

  test("the image runs as a non-root user, checks /health, keeps data in a volume", () => {
    expect(dockerfile).toMatch(/^FROM oven\/bun:/m);
    expect(dockerfile).toMatch(/^USER bun$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*127\.0\.0\.1:9002\/health/m);
    expect(dockerfile).toMatch(/^VOLUME \/data$/m);
    const copied = [...dockerfile.matchAll(/^COPY (\w+) \.\/\1$/gm)].map((m) => m[1]!);
    expect(copied.filter((dir) => !existsSync(join(ROOT, dir)))).toEqual([]);
    expect(copied).toEqual(["bin", "src", "drizzle", "catalogue"]);
  });

  test("the examples give a node the enrollment token that Core is given", () => {
    const joined = dockerfile.replace(/\\\n#\s+/g, " ");
    const examples = [...joined.matchAll(/^#\s+docker run (.*)$/gm)].map((m) => m[1]!);
    const coreRun = examples.find((e) => !/ honeybee node /.test(e + " ") && e.includes("HONEYBEE_NODE_ENROLLMENT_TOKEN"));
    const nodeRun = examples.find((e) => / honeybee node /.test(e + " "));
    expect(coreRun).toBeDefined();
    expect(nodeRun).toMatch(/HONEYBEE_ENROLLMENT_TOKEN=|--enrollment-token /);
  });

  test("compose says how authentication is turned on for each party, in keys the program has", () => {
    const comments = [...composeText.matchAll(/#(.*)$/gm)].map((m) => m[1]!).join("\n");
    for (const v of ["HONEYBEE_TOKENS_FILE", "HONEYBEE_TOKEN", "HONEYBEE_NODE_ENROLLMENT_TOKEN", "HONEYBEE_ENROLLMENT_TOKEN"]) expect(comments).toMatch(new RegExp(`\\b${v}\\b`));
    // Node authentication exists (enrollment, then TOTP): the comments must not say otherwise.
    expect(comments).not.toMatch(/no authentication yet/);
    expect(compose.services.core!.environment).toEqual({ HONEYBEE_INSECURE: "true" });
  });
});
