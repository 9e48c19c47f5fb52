import { describe, expect, test } from "bun:test";
import { EventStreamClient, startTestCore, type TestCore } from "../helpers";
import { cli } from "./cli-helpers";

async function ingest(core: TestCore, lines: object[]): Promise<void> {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(lines.map((l) => JSON.stringify(l)));
  await c.ack(lines.length);
}

describe("honeybee events and stats with countries and ASNs", () => {
  test("--country and --asn filter; stats list countries and ASNs with the data's credit", async () => {
    await using core = await startTestCore();
    const login = (src_ip: string) => ({ eventid: "cowrie.login.failed", pot_id: "ssh-01", pot_type: "cowrie", src_ip, username: "root", password: "x" });
    await ingest(core, [login("8.8.8.8"), login("218.92.0.1"), login("8.8.8.8")]);
    const sources = async (args: string[]) => (await cli(["events", "--json", ...args], core)).json.events.map((e: { src_ip: string }) => e.src_ip);
    expect(await sources(["--country", "us"])).toEqual(["8.8.8.8", "8.8.8.8"]);
    expect(await sources(["--asn", "4134"])).toEqual(["218.92.0.1"]);

    const stats = await cli(["stats"], core);
    expect(stats.code).toBe(0);
    const lines = stats.stdout.split("\n");
    expect(lines).toContain("COUNTRY  COUNT");
    expect(lines.find((l) => l.startsWith("US "))).toMatch(/^US\s+2$/);
    expect(lines.find((l) => l.startsWith("15169 "))).toMatch(/^15169 Google LLC\s+2$/);
    expect(lines).toContain("Countries: IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0");
  });
});
