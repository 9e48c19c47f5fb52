/** Helpers for the output and rule tests: sending events, waiting on what a target received, a TCP relay that can be taken down. */
import type { Socket, TCPSocketListener } from "bun";
import { stringify } from "../../src/protocol/json";
import { EventStreamClient, getJson, settled, type TestCore, until } from "./index";

/**
 * Sends flat Cowrie-style events on an acknowledged connection and waits until they are
 * committed (in a cluster, by a writer; `token` reads the stats of a Core that wants one).
 */
export async function sendEvents(core: TestCore, events: Record<string, unknown>[], token?: string): Promise<void> {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(events.map((e) => stringify({ eventid: "cowrie.login.failed", pot_id: "ssh-01", pot_type: "cowrie", src_ip: "203.0.113.7", ...e })));
  await c.ack(events.length);
  await settled(core, token);
}

/**
 * Waits until the rules have read every committed event and their alerts are committed too (in
 * a cluster, alerts go through the bus and a writer like any event).
 */
export async function rulesCaughtUp(core: TestCore): Promise<void> {
  await settled(core);
  await waitFor(async () => (await getJson(`${core.api}/api/v1/stats`)).body.rules.lag === 0, "the rules to read every event");
  await settled(core);
}

export const numbered = (from: number, n: number, extra: Record<string, unknown> = {}) => Array.from({ length: n }, (_, i) => ({ seq: from + i, ...extra }));

/**
 * Waits until `check` returns a truthy value (the shared `until`, with a longer bound: outputs
 * deliver on their own schedule and retries back off); a target that never gets there fails
 * the test with `what`.
 */
export async function waitFor<T>(check: () => Promise<T> | T, what: string, ms = 20_000): Promise<Exclude<T, null | undefined | false>> {
  return (await until(check, what, Math.ceil(ms / 10))) as Exclude<T, null | undefined | false>;
}

export async function outputStatus(core: TestCore, name: string): Promise<any> {
  const s = await getJson(`${core.api}/api/v1/stats`);
  return (s.body.outputs as any[]).find((o) => o.name === name);
}

/** Waits until an output has failed at least `n` attempts: the target is down and it is retrying. */
export const failedAtLeast = (core: TestCore, name: string, n: number) => waitFor(async () => (await outputStatus(core, name))?.failed >= n, `${name} to fail ${n} times`);

/**
 * A TCP relay in front of a real broker: `down()` closes every relayed connection and stops
 * listening (connections are refused), `up()` listens again on the same port. How a broker
 * that is down looks to a client, without stopping the machine's shared broker.
 */
export class Relay {
  private listener: TCPSocketListener<{ peer: Socket<any> | null; pending: Buffer[] }> | null = null;
  private readonly open = new Set<Socket<any>>();
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = "127.0.0.1",
  ) {}

  up(): this {
    const relay = this;
    this.listener = Bun.listen<{ peer: Socket<any> | null; pending: Buffer[] }>({
      hostname: "127.0.0.1",
      port: this.port,
      socket: {
        open(client) {
          client.data = { peer: null, pending: [] };
          relay.open.add(client);
          Bun.connect({
            hostname: relay.targetHost,
            port: relay.targetPort,
            socket: {
              open(server) {
                relay.open.add(server);
                client.data.peer = server;
                for (const b of client.data.pending) server.write(b);
                client.data.pending = [];
              },
              data(_s, chunk) {
                client.write(chunk);
              },
              close(server) {
                relay.open.delete(server);
                client.end();
              },
              error() {},
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          if (client.data.peer) client.data.peer.write(chunk);
          else client.data.pending.push(Buffer.from(chunk));
        },
        close(client) {
          relay.open.delete(client);
          client.data.peer?.end();
        },
        error() {},
      },
    });
    this.port = this.listener.port;
    return this;
  }

  down(): void {
    this.listener?.stop(true);
    this.listener = null;
    for (const s of this.open) s.terminate();
    this.open.clear();
  }

  [Symbol.dispose](): void {
    this.down();
  }
}
