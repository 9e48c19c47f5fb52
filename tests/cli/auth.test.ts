import { describe, expect, test } from "bun:test";
import { sha256 } from "../../src/core/auth";
import { BIG_ID, BUN, registerNode, startTestCore } from "../helpers";
import { LiveProcess, MAIN, cli } from "./cli-helpers";

const READ = "hb_read_token_for_tests_0123456789";
const OPERATOR = "hb_operator_token_for_tests_012345";

describe("HONEYBEE_TOKEN against a Core that checks API tokens", () => {
  test("no token, a read token, an operator token", async () => {
    await using core = await startTestCore({
      tokens: [
        { name: "viewer", role: "read", sha256: sha256(READ) },
        { name: "ops", role: "operator", sha256: sha256(OPERATOR) },
      ],
    });
    using node = await registerNode(core, BIG_ID, "sensor-1");

    expect(await cli(["nodes"], core)).toMatchObject({
      code: 1,
      stderr: "honeybee: this Core requires an API token: send Authorization: Bearer <token>; set HONEYBEE_TOKEN to an API token (an operator's for commands)\n",
    });
    expect(await cli(["events", "--follow"], core, { HONEYBEE_TOKEN: "hb_wrong" })).toMatchObject({ code: 1, stderr: expect.stringContaining("the API token is not valid; set HONEYBEE_TOKEN") });

    const asReader = { HONEYBEE_TOKEN: READ };
    expect((await cli(["nodes", "--json"], core, asReader)).json.nodes).toHaveLength(1);
    expect((await cli(["nodes", "--json", "--token", READ], core)).json.nodes).toHaveLength(1);
    expect(await cli(["stop", "sensor-1", "ssh-01"], core, asReader)).toMatchObject({ code: 1, stderr: 'honeybee: token "viewer" has role read; this needs operator\n' });

    // The live feed takes the token too: a follower, then a command watched to its end.
    await using follow = new LiveProcess([BUN, MAIN, "events", "--follow"], { env: { HONEYBEE_API: core.api, HONEYBEE_WS: core.ws, ...asReader } });
    await follow.waitFor("following events", "err");
    const stop = cli(["stop", "sensor-1", "ssh-01"], core, { HONEYBEE_TOKEN: OPERATOR });
    const sent = await node.nextKind("NodeCommand");
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Stopped" });
    node.send("CommandResult", { command_id: sent.command_id, node_id: BIG_ID, ok: true, message: "stopped" });
    expect(await stop).toMatchObject({ code: 0, stdout: `ssh-01 is Stopped on node sensor-1 (${BIG_ID})\n` });
  });
});
