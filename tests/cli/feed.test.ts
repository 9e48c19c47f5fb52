import { expect, test } from "bun:test";
import { Unreachable } from "../../src/cli/errors";
import { LiveFeed } from "../../src/cli/feed";

// A follower reconnecting while Core restarts can fail its WebSocket against the old process and
// ask the new one why: the new one answers the plain-HTTP probe with 426, which is no refusal.
test("a WebSocket that fails where the proxy would upgrade is unreachable (retried), not refused", async () => {
  let upgrade = false;
  using server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req, srv) {
      if (upgrade && srv.upgrade(req)) return undefined;
      return Response.json({ error: { code: "upgrade_required", message: "this port speaks WebSocket only" } }, { status: 426 });
    },
    websocket: { message() {} },
  });
  const base = `ws://127.0.0.1:${server.port}`;
  const failed = await LiveFeed.connect(base, {}).catch((e) => e);
  expect(failed).toBeInstanceOf(Unreachable);
  upgrade = true;
  using feed = await LiveFeed.connect(base, {});
  expect(feed).toBeInstanceOf(LiveFeed);
});

test("a refusal with a reason (a bad filter) stays the operator's error", async () => {
  using server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => Response.json({ error: { code: "bad_request", message: "pot_id must be a UUID" } }, { status: 400 }),
  });
  const failed = await LiveFeed.connect(`ws://127.0.0.1:${server.port}`, {}).catch((e) => e);
  expect(failed).not.toBeInstanceOf(Unreachable);
  expect(String(failed.message)).toContain("refused the connection: pot_id must be a UUID");
});
