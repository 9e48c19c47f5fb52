import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { staleDocs } from "../../scripts/gen-docs";
import { loadCatalogue } from "../../src/catalogue/loader";
import { BUILTIN_CATALOGUE } from "../../src/catalogue/paths";
import { validateCommand } from "../../src/modules/commands/router";
import { normalise } from "../../src/core/ingest/normalise";
import { unwrapNodeCommand } from "../../src/core/proxy/server";
import { parseWithIds } from "../../src/protocol/json";
import { decodeEnvelope } from "../../src/protocol/messages";
import { BUN, ROOT } from "../helpers";

const doc = (name: string) => readFileSync(join(ROOT, "docs", name), "utf8");
const jsonBlocks = (text: string) => [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());

describe("reference docs", () => {
  test("the generated ones are current (run: bun scripts/gen-docs.ts)", async () => {
    expect(await staleDocs()).toEqual([]);
  });

  test("every Protocol v2 example is a message Core accepts", () => {
    const blocks = jsonBlocks(doc("protocol.md"));
    expect(blocks.length).toBeGreaterThan(20);
    for (const text of blocks) {
      const value = parseWithIds(text) as Record<string, any>;
      let verdict: string;
      if ("version" in value) {
        const d = decodeEnvelope(value);
        verdict = d.ok ? "ok" : d.message;
        if (d.ok && d.kind === "NodeCommand") {
          const c = validateCommand((d.payload as { command: unknown }).command);
          verdict = c.ok ? "ok" : c.message;
        }
      } else if ("eventid" in value) {
        const n = normalise(value, { receivedAt: 0, nodeId: null, nodeOfPot: () => null });
        verdict = n.ok ? "ok" : n.error;
      } else {
        const c = unwrapNodeCommand(value);
        const v = c.ok ? validateCommand(c.command) : null;
        verdict = v?.ok ? "ok" : (v?.message ?? "not a message, an event or a command");
      }
      expect({ text, verdict }).toEqual({ text, verdict: "ok" });
    }
  });

  test("every event of every built-in honeypot kind is documented", () => {
    const text = doc("honeypots.md");
    const { kinds } = loadCatalogue(BUILTIN_CATALOGUE);
    // A kind has its section in honeypots.md; one with a page of its own (docs/honeypots/KIND.md)
    // links it from there and lists its events on it.
    const missing = kinds.flatMap((k) => {
      const name = k.manifest.name;
      const own = existsSync(join(ROOT, "docs", "honeypots", `${name}.md`));
      const where = own ? `${text}\n${doc(`honeypots/${name}.md`)}` : text;
      const events = (k.manifest.events ?? []).map((e) => `\`${e}\``).filter((s) => !where.includes(s));
      const section = text.includes(`## ${name}`) ? [] : [`## ${name}`];
      const link = !own || text.includes(`(honeypots/${name}.md)`) ? [] : [`(honeypots/${name}.md)`];
      return [...section, ...link, ...events];
    });
    expect(missing).toEqual([]);
    for (const block of jsonBlocks(text)) {
      expect(Object.keys(parseWithIds(block) as object)).toEqual(["id", "node_id", "pot_id", "pot_type", "event_type", "timestamp", "src_ip", "data"]);
    }
  });

  test("node ids in the examples keep all their digits", () => {
    expect(doc("protocol.md")).toContain('"node_id": 18446744073709551557');
    expect(doc("api.md")).toContain('"node_id": 18446744073709551557');
  });

  test("docs/cli.md has every command of the program, token create included", async () => {
    const help = async (...args: string[]) => {
      const p = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), ...args, "--help"], { stdout: "pipe", stderr: "pipe", env: { ...process.env, COLUMNS: "200" } });
      return new Response(p.stdout).text();
    };
    const commandsIn = (text: string) => [...(text.split("\nCommands:\n")[1] ?? "").matchAll(/^ {2}([a-z]+)/gm)].map((m) => m[1]!).filter((c) => c !== "help");
    const top = commandsIn(await help());
    const subs = await Promise.all(top.map(async (c) => commandsIn(await help(c)).map((s) => `${c} ${s}`)));
    // `token` only groups its subcommands; every other command runs.
    const all = [...top.filter((c) => c !== "token"), ...subs.flat()];
    expect(all).toContain("token create");
    const text = doc("cli.md");
    expect(all.filter((c) => !text.includes(`\n## honeybee ${c}\n`))).toEqual([]);
  });
});

/** Every text file under the folders, as [path, text]. */
function texts(...dirs: string[]): [string, string][] {
  const out: [string, string][] = [];
  const walk = (p: string) => {
    if (statSync(p).isDirectory()) for (const f of readdirSync(p)) walk(join(p, f));
    else if (/\.(ts|md|json|yaml|sh)$|Dockerfile$/.test(p)) out.push([p.slice(ROOT.length + 1), readFileSync(p, "utf8")]);
  };
  for (const d of dirs) walk(join(ROOT, d));
  return out;
}

describe("the repository speaks of itself", () => {
  test("code, tests and docs cite files in the repository, not design notes outside it", () => {
    const outside = ["SPEC", "DESIGN"].map((n) => `${n}.md`);
    const hits = texts("src", "tests", "bench", "scripts", "docs", "docker", "catalogue", "README.md").filter(([, t]) => outside.some((o) => t.includes(o)));
    expect(hits.map(([p]) => p)).toEqual([]);
  });

  test("no example uses Cowrie's default host name, a known honeypot tell, and the built-in cowrie does not default to it", () => {
    const tell = ["svr", "04"].join("");
    const hits = texts("src", "tests", "docs", "docker", "catalogue", "README.md").filter(([, t]) => t.includes(tell));
    expect(hits.map(([p]) => p)).toEqual([]);
    const { kinds } = loadCatalogue(BUILTIN_CATALOGUE);
    expect(kinds.find((k) => k.manifest.name === "cowrie")!.manifest.config.hostname!.default).toBe("debian");
  });
});

describe("the Node.js the README names", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const twoCommands = readme.slice(readme.indexOf("## Two commands"), readme.indexOf("\n## ", readme.indexOf("## Two commands") + 1));
  const named = /Node\.js (\d+)\.(\d+) or later/.exec(twoCommands);
  const version = named ? `${named[1]}.${named[2]}.0` : "not named";

  test("is named under Two commands, and package.json's engines say the same", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect({ version, engines: pkg.engines?.node }).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.0$/), engines: `>=${version}` });
  });

  // npm warns (EBADENGINE) about any package whose engines leave that version out.
  test("is one every locked and installed package accepts", () => {
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")).packages as Record<string, { engines?: { node?: string } }>;
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(lock)) {
      if (!path) continue;
      let installed: { engines?: { node?: string } } | null = null;
      try {
        installed = JSON.parse(readFileSync(join(ROOT, path, "package.json"), "utf8"));
      } catch {}
      for (const [where, range] of [["locked", entry.engines?.node], ["installed", installed?.engines?.node]])
        if (typeof range === "string" && !Bun.semver.satisfies(version, range)) refusing.push(`${path} (${where}): node ${range}`);
    }
    expect(refusing).toEqual([]);
  });
});
