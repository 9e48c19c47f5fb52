import { describe, expect, test } from "bun:test";
import { freePort, getJson, startTestCore } from "../helpers";
import { cli } from "./cli-helpers";

describe("honeybee catalogue", () => {
  test("the kinds nodes can install, and one kind's config keys, in both modes", async () => {
    await using core = await startTestCore();
    const list = await cli(["catalogue"], core);
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^KIND\s+ALIASES\s+CONFIG KEYS\s+DESCRIPTION$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 2))).toEqual([
      ["cowrie", "ssh-telnet, ssh"],
      ["honnypotter", "http-login, wordpress"],
    ]);
    expect((await cli(["catalogue", "--json"], core)).json).toEqual((await getJson(`${core.api}/api/v1/catalogue`)).body);

    const kind = await cli(["catalogue", "SSH"], core);
    expect(kind.stdout).toStartWith("Kind:        cowrie\nAliases:     ssh-telnet, ssh\n");
    expect(kind.stdout).toMatch(/^ssh_port\s+2222\s+Port of the SSH listener\.$/m);
    expect(kind.stdout).toContain("Events: cowrie.session.connect, ");
    expect((await cli(["catalog", "http-login", "--json"], core)).json).toMatchObject({ name: "honnypotter", config: { http_port: { default: "8080", port: true } } });
  });

  test("errors: unknown kind or unreachable Core (1), bad flag (2)", async () => {
    await using core = await startTestCore();
    expect(await cli(["catalogue", "mailpot"], core)).toMatchObject({ code: 1, stderr: 'honeybee: no honeypot kind "mailpot" in the catalogue (kinds: cowrie, honnypotter)\n' });
    const dead = `http://127.0.0.1:${freePort()}`;
    expect(await cli(["catalogue", "--api", dead])).toMatchObject({ code: 1, stderr: expect.stringMatching(new RegExp(`^honeybee: cannot reach Core at ${RegExp.escape(dead)} `)) });
    expect(await cli(["catalogue", "--verbose"], core)).toMatchObject({ code: 2, stderr: `honeybee: unknown option '--verbose'; see "honeybee catalogue --help"\n` });
  });
});
