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
type Service = { image?: string; build?: { context: string; dockerfile: string }; command: string[]; environment?: Record<string, string>; ports?: string[]; volumes?: string[] };
const compose = Bun.YAML.parse(composeText) as { services: Record<string, Service> };
const scaleText = read("docker", "compose.scale.yaml");
const scale = Bun.YAML.parse(scaleText) as { services: Record<string, Service> };

/** A command's `--flag value` pairs (a flag without a value maps to ""). */
function flagsOf(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  argv.forEach((a, i) => {
    if (a.startsWith("-")) out[a] = argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("-") ? argv[i + 1]! : "";
  });
  return out;
}

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
    const used = new Set([...`${dockerfile}\n${composeText}\n${scaleText}`.matchAll(/HONEYBEE_[A-Z_]+/g)].map((m) => m[0]));
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

describe("docker/compose.scale.yaml", () => {
  const cores = ["core1", "core2", "core3"];
  const nats = ["n1", "n2", "n3"];

  test("PostgreSQL, three NATS servers and three Cores, from the official images and the project's Dockerfile", () => {
    expect(Object.keys(scale.services).sort()).toEqual([...cores, ...nats, "postgres"]);
    expect(scale.services.postgres!.image).toBe("postgres:16");
    for (const n of nats) expect(scale.services[n]!.image).toBe("nats:2.10");
    for (const c of cores) expect(scale.services[c]!.image).toBe("honeybee");
    const built = cores.filter((c) => scale.services[c]!.build);
    expect(built).toEqual(["core1"]);
    const { context, dockerfile: file } = scale.services.core1!.build!;
    expect(join("docker", context, file)).toBe(join("docker", "Dockerfile"));
  });

  test("the NATS servers form one JetStream cluster: a name each, one cluster name, routes to the two others", () => {
    const flags = Object.fromEntries(nats.map((n) => [n, flagsOf(scale.services[n]!.command)]));
    const clusterPort = (n: string) => new URL(flags[n]!["--cluster"]!).port;
    for (const n of nats) {
      const f = flags[n]!;
      expect(f["-js"]).toBe("");
      expect(scale.services[n]!.volumes).toEqual([`${n}-data:${f["-sd"]}`]);
      expect(f["--server_name"]).toBe(n);
      expect(f["--cluster_name"]).toBe(flags.n1!["--cluster_name"]!);
      expect(f["--cluster"]).toMatch(/^nats:\/\/0\.0\.0\.0:\d+$/);
      const others = nats.filter((o) => o !== n);
      expect(f["--routes"]!.split(",").sort()).toEqual(others.map((o) => `nats://${o}:${clusterPort(o)}`));
    }
  });

  test("every Core runs on the one database and the three NATS servers, with flags the program has", () => {
    const pg = scale.services.postgres!.environment!;
    // The NATS servers' client port is the default, 4222: no command sets another.
    expect(nats.flatMap((n) => scale.services[n]!.command.filter((a) => a === "-p" || a === "--port"))).toEqual([]);
    for (const c of cores) {
      const [sub, ...args] = scale.services[c]!.command;
      expect(sub).toBe("core");
      const f = flagsOf(args);
      expect({ c, unknown: Object.keys(f).filter((k) => !optionsOf("core").includes(k)) }).toEqual({ c, unknown: [] });
      const db = new URL(f["--db"]!);
      expect({ protocol: db.protocol, host: db.hostname, port: db.port, user: db.username, password: db.password, db: db.pathname }).toEqual({
        protocol: "postgres:",
        host: "postgres",
        port: "5432",
        user: pg.POSTGRES_USER!,
        password: pg.POSTGRES_PASSWORD!,
        db: `/${pg.POSTGRES_DB}`,
      });
      expect(f["--bus"]!.split(",")).toEqual(nats.map((n) => `nats://${n}:4222`));
      expect(f["--cluster"]).toBe("honeybee");
      expect(scale.services[c]!.volumes).toEqual([`${c}-data:/data`]);
    }
  });

  test("each Core publishes its four ports on the host's loopback, and no host port twice", () => {
    const published = Object.values(scale.services).flatMap((s) => s.ports ?? []);
    for (const c of cores) {
      const ports = scale.services[c]!.ports!.map((p) => p.split(":"));
      expect(ports.map((p) => p[0])).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"]);
      expect(ports.map((p) => p[2])).toEqual(["9001", "9002", "9003", "9100"]);
    }
    const hostSide = published.map((p) => p.split(":").slice(0, 2).join(":"));
    expect(hostSide.filter((h, i) => hostSide.indexOf(h) !== i)).toEqual([]);
    expect(hostSide).toHaveLength(12);
  });

  test("the commands and flags in the comments are the CLI's", () => {
    const lines = [...scaleText.matchAll(/exec core\d honeybee (.*)$/gm)].map((m) => m[1]!.split(/\s+/));
    expect(lines.length).toBeGreaterThan(1);
    for (const [sub, ...args] of lines) {
      const flags = args.filter((a) => a.startsWith("-"));
      expect({ sub, unknown: flags.filter((f) => !optionsOf(sub!).includes(f)) }).toEqual({ sub, unknown: [] });
    }
    const mentioned = [...scaleText.matchAll(/`(--[a-z-]+)/g)].map((m) => m[1]!);
    expect(mentioned).toContain("--roles");
    expect(mentioned.filter((f) => !optionsOf("core").includes(f))).toEqual([]);
  });
});
