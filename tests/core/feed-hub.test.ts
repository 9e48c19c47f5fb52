/**
 * The feed hub's bookkeeping, on its own: which topics it publishes a message to as clients
 * with different filters join and leave (the live-feed tests check the same end to end).
 */
import { expect, test } from "bun:test";
import { FeedHub } from "../../src/core/proxy/feed-hub";
import { parseFeedFilter } from "../../src/core/proxy/topics";

function hubWithLog() {
  const hub = new FeedHub();
  const sent: string[] = [];
  hub.attach({ publish: (topic: string) => (sent.push(topic), 0) } as never);
  const client = () => ({ subscribe() {}, unsubscribe() {} });
  const join = (query: string) => {
    const parsed = parseFeedFilter(new URLSearchParams(query));
    if (!parsed.ok) throw new Error(parsed.message);
    return hub.join(client(), parsed.filter);
  };
  const event = (node_id: bigint, pot_id: string, event_type: string) => {
    sent.length = 0;
    hub.publish("PotEvent", { id: 1 }, { node_id, pot_id, event_type });
    return [...sent].sort();
  };
  return { hub, join, event };
}

test("a message goes to the topics of the filters in use, and no longer once their clients leave", () => {
  const { hub, join, event } = hubWithLog();
  const all = join("kinds=PotEvent");
  const byPot = join("pot_id=ssh-1");
  const byNodeAndType = join("node_id=7&event_type=cowrie.login.failed");
  const byPotAgain = join("pot_id=ssh-1&kinds=PotEvent");
  expect(event(7n, "ssh-1", "cowrie.login.failed")).toEqual(["PotEvent", "PotEvent|n=7|t=cowrie.login.failed", "PotEvent|p=ssh-1"]);
  expect(event(8n, "http-1", "cowrie.login.failed")).toEqual(["PotEvent"]);
  hub.leave(byPot);
  // Another client still has the pot's topic.
  expect(event(7n, "ssh-1", "x")).toEqual(["PotEvent", "PotEvent|p=ssh-1"]);
  hub.leave(byPotAgain);
  hub.leave(byNodeAndType);
  expect(event(7n, "ssh-1", "cowrie.login.failed")).toEqual(["PotEvent"]);
  hub.leave(all);
  expect(event(7n, "ssh-1", "cowrie.login.failed")).toEqual([]);
  expect(hub.wants("PotEvent")).toBe(false);
  // A filter on a field a kind does not carry leaves that kind out.
  join("event_type=cowrie.login.failed");
  expect([hub.wants("PotEvent"), hub.wants("NodeStatusUpdate")]).toEqual([true, false]);
});
