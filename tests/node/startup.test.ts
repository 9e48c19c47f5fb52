import { expect, test } from "bun:test";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { PortInUseError } from "../../src/net/bind";
import { tempDir } from "../helpers";

test("a relay port already in use stops the node with a message naming it", async () => {
  using dir = tempDir();
  const busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const start = startNode({ core: "127.0.0.1:1", data: dir.path, relay_port: busy.port, log_level: "silent" }, silentLogger());
    expect(start).rejects.toThrow(PortInUseError);
    expect(start).rejects.toThrow(`127.0.0.1:${busy.port} (relay_port): the port is already in use`);
  } finally {
    busy.stop(true);
  }
});
