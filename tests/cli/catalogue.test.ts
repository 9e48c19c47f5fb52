import { loadCatalogue } from "../../src/catalogue/loader";
import { BUILTIN_CATALOGUE } from "../../src/catalogue/paths";
import { describe, expect, test } from "bun:test";
import { freePort, getJson, startTestCore } from "../helpers";
import { catalogueTable, kindDetail, type CatalogueBody } from "../../src/cli/catalogue";
import { cli } from "./cli-helpers";

const BUILTIN_KINDS = loadCatalogue(BUILTIN_CATALOGUE).kinds.map((k) => k.manifest.name).join(", ");

describe("honeybee catalogue", () => {
  test("the kinds nodes can install, and one kind's config keys, in both modes", async () => {
    await using core = await startTestCore();
    const list = await cli(["catalogue"], core);
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^KIND\s+ALIASES\s+DESCRIPTION$/);
    // Rows start at the left edge; their descriptions wrap onto indented lines.
    const rows = lines.slice(1).filter((l) => /^\S/.test(l)).map((l) => l.split(/\s{2,}/).slice(0, 3));
    expect(rows.map((r) => r[0])).toEqual([...BUILTIN_KINDS.split(", "), "Config keys and events of a kind: honeybee catalogue KIND"]);
    // Descriptions wrap where the widest alias leaves them room: their first words are checked.
    expect(rows.filter((r) => r[0] === "cowrie" || r[0] === "honnypotter").map((r) => [r[0], r[1], r[2]?.split(" ").slice(0, 4).join(" ")])).toEqual([
      ["cowrie", "ssh-telnet, ssh", "SSH and Telnet honeypot"],
      ["honnypotter", "http-login, wordpress", "HTTP login honeypot: a"],
    ]);
    expect((await cli(["catalogue", "--json"], core)).json).toEqual((await getJson(`${core.api}/api/v1/catalogue`)).body);

    const kind = await cli(["catalogue", "SSH"], core);
    expect(kind.stdout).toStartWith("Kind:        cowrie\nAliases:     ssh-telnet, ssh\n");
    expect(kind.stdout).toMatch(/^ssh_port\s+2222\s+Port of the SSH listener\.$/m);
    expect(kind.stdout).toContain("Events: cowrie.session.connect, ");
    expect((await cli(["catalog", "http-login", "--json"], core)).json).toMatchObject({ name: "honnypotter", config: { http_port: { default: "8080", port: true } } });
  });

  test("fits 80 columns (a pipe, or an 80-column terminal) without losing a word", async () => {
    await using core = await startTestCore();
    const body = (await getJson(`${core.api}/api/v1/catalogue`)).body as CatalogueBody;
    const outputs = [(await cli(["catalogue"], core)).stdout];
    for (const k of body.kinds) outputs.push((await cli(["catalogue", k.name], core)).stdout);
    const tooLong = (text: string, width: number) => text.split("\n").filter((l) => l.length > width);
    for (const text of outputs) expect(tooLong(text, 80)).toEqual([]);
    // A terminal's own width, narrower or wider.
    for (const width of [72, 120]) {
      for (const text of [catalogueTable(body.kinds, width), ...body.kinds.map((k) => kindDetail(k, width))]) expect(tooLong(text, width)).toEqual([]);
    }
    // Wrapped, not cut: every word of every description and default is still there.
    const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);
    const shown = new Set(words(outputs.join("\n")));
    for (const k of body.kinds) {
      const texts = [k.description, ...Object.values(k.config).flatMap((c) => [c.description, c.default])];
      expect(texts.flatMap(words).filter((w) => !shown.has(w))).toEqual([]);
    }
    expect(outputs.join("\n")).not.toContain("…");
  });

  test("errors: unknown kind or unreachable Core (1), bad flag (2)", async () => {
    await using core = await startTestCore();
    expect(await cli(["catalogue", "mailpot"], core)).toMatchObject({ code: 1, stderr: `honeybee: no honeypot kind "mailpot" in the catalogue (kinds: ${BUILTIN_KINDS})\n` });
    const dead = `http://127.0.0.1:${freePort()}`;
    expect(await cli(["catalogue", "--api", dead])).toMatchObject({ code: 1, stderr: expect.stringMatching(new RegExp(`^honeybee: cannot reach Core at ${RegExp.escape(dead)} `)) });
    expect(await cli(["catalogue", "--verbose"], core)).toMatchObject({ code: 2, stderr: `honeybee: unknown option '--verbose'; see "honeybee catalogue --help"\n` });
  });
});
