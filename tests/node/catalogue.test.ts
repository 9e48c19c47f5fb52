import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeKinds, findKind, loadCatalogue, parseManifest } from "../../src/catalogue/loader";
import { BUILTIN_CATALOGUE } from "../../src/catalogue/paths";
import type { Manifest } from "../../src/catalogue/manifest";
import { expandArgv, insidePotDir, potEnv, resolvePotConfig } from "../../src/catalogue/pot-config";
import { tempDir } from "../helpers";
import { FIXTURE_CATALOGUE } from "./node-helpers";

const manifest = (over: Partial<Manifest> = {}): Manifest => ({
  name: "kind",
  aliases: [],
  description: "d",
  entry: ["${BUN}", "run.ts"],
  install: [],
  config: { ssh_port: { default: "2222", description: "", port: true }, telnet_port: { default: "2223", description: "", port: true }, hostname: { default: "db-prod-2", description: "", schema: { pattern: "^[a-z0-9-]+$" } } },
  ...over,
});
const integration = { event_host: "127.0.0.1", event_port: 9101, node_id: 18446744073709551557n, pot_id: "p", pot_type: "kind" };

describe("catalogue loader", () => {
  test("loads the fixture catalogue and finds kinds by name or alias, ignoring case", () => {
    const cat = loadCatalogue(FIXTURE_CATALOGUE);
    expect(cat.problems).toEqual([]);
    expect(cat.kinds.map((k) => k.manifest.name)).toEqual(["testpot"]);
    expect(findKind(cat, "TEST-POT")?.manifest.name).toBe("testpot");
    expect(findKind(cat, "cowrie")).toBeNull();
    expect(describeKinds(cat)).toBe("testpot (test-pot, fixture-pot)");
  });

  test("a broken manifest is reported by folder and does not hide the others", () => {
    using dir = tempDir();
    const put = (folder: string, text: string) => {
      mkdirSync(join(dir.path, folder));
      writeFileSync(join(dir.path, folder, "manifest.json"), text);
    };
    put("a-good", JSON.stringify(manifest({ name: "good", aliases: ["ssh"] })));
    put("b-json", "{nope");
    put("c-port", JSON.stringify(manifest({ name: "badport", config: { p: { default: "99999", description: "", port: true } } })));
    put("d-clash", JSON.stringify(manifest({ name: "other", aliases: ["SSH"] })));
    put("e-schema", JSON.stringify({ name: "Bad Name" }));
    mkdirSync(join(dir.path, "no-manifest"));
    const cat = loadCatalogue(dir.path);
    expect(cat.kinds.map((k) => k.manifest.name)).toEqual(["good"]);
    expect(cat.problems.map((p) => p.folder)).toEqual(["b-json", "c-port", "d-clash", "e-schema"]);
    expect(cat.problems[1]!.message).toBe('config key p is a port but its default "99999" is not a number from 1 to 65535');
    expect(cat.problems[2]!.message).toBe('name or alias "ssh" is already used by kind good');
  });

  test("defaults of optional manifest fields are filled in", () => {
    const m = parseManifest(JSON.stringify({ name: "x", description: "d", entry: ["run"], config: {} }));
    expect(m).toMatchObject({ aliases: [], install: [] });
  });
});

describe("pot config", () => {
  test("defaults < given, every value checked", () => {
    expect(resolvePotConfig(manifest(), { ssh_port: "22" }, integration)).toEqual({ ok: true, value: { ssh_port: "22", telnet_port: "2223", hostname: "db-prod-2" } });
    expect(resolvePotConfig(manifest(), { hostname: "Bad Host" }, integration)).toEqual({ ok: false, message: 'config key hostname: "Bad Host" does not match ^[a-z0-9-]+$' });
    expect(resolvePotConfig(manifest(), { ssh_port: "2223" }, integration)).toEqual({ ok: false, message: "config keys ssh_port and telnet_port both use port 2223" });
    expect(resolvePotConfig(manifest(), { ssh_port: 22 as unknown as string }, integration)).toMatchObject({ ok: false, message: expect.stringContaining("must be a string") });
  });

  test("a manifest key that is also an integration key takes the node's value (HonnyPotter's pot_id)", () => {
    const m = manifest({ config: { http_port: { default: "8080", description: "", port: true }, pot_id: { default: "", description: "" } } });
    expect(resolvePotConfig(m, { pot_id: "p" }, integration)).toMatchObject({ ok: true });
    const env = potEnv({ http_port: "8080", pot_id: "" }, integration, "/d/config.json");
    expect(env).toEqual({
      HONEYBEE_HTTP_PORT: "8080",
      HONEYBEE_POT_ID: "p",
      HONEYBEE_EVENT_HOST: "127.0.0.1",
      HONEYBEE_EVENT_PORT: "9101",
      HONEYBEE_NODE_ID: "18446744073709551557",
      HONEYBEE_POT_TYPE: "kind",
      HONEYBEE_CONFIG: "/d/config.json",
    });
  });

  test("placeholders are replaced inside arguments, nothing else is", () => {
    expect(expandArgv(["${BUN}", "${POT_DIR}/main.ts", "--home=${HONEYBEE_HOME}", "${HOME}", "$BUN"], { BUN: "/b", POT_DIR: "/p", HONEYBEE_HOME: "/h" })).toEqual(["/b", "/p/main.ts", "--home=/h", "${HOME}", "$BUN"]);
  });
});

describe("the built-in catalogue", () => {
  test("every manifest in it loads (kinds are added by the honeypot authors)", () => {
    const cat = loadCatalogue(BUILTIN_CATALOGUE);
    expect(cat.problems).toEqual([]);
    for (const { manifest: m } of cat.kinds) expect(m.entry.length).toBeGreaterThan(0);
  });
});

describe("path config keys", () => {
  test("stay inside the pot's folder", () => {
    expect(["log", "./log", "logs/cowrie", "a/../log", "log/"].filter(insidePotDir)).toEqual(["log", "./log", "logs/cowrie", "a/../log", "log/"]);
    expect(["", " ", "..", "../log", "../../..", "log/../..", "/var/log", "log\\..\\..", "log\n", "a/\0"].filter(insidePotDir)).toEqual([]);
  });
});
