import { describe, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { cli } from "./cli-helpers";

describe("honeybee --version", () => {
  test("prints the package's version, exit 0", async () => {
    expect(await cli(["--version"])).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
    expect(await cli(["-V"])).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });
});
