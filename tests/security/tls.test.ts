import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startNode } from "../../src/node/agent";
import { clientTls } from "../../src/node/tls";
import { silentLogger } from "../../src/log";
import { startTestCore, tempDir } from "../helpers";
import { makeCertificates } from "../helpers/tls";

function nodeRegistered(core: { bus: { subscribe(l: (m: { kind: string }) => void): () => void } }) {
  const { promise, resolve } = Promise.withResolvers<void>();
  const off = core.bus.subscribe((m) => m.kind === "NodeRegistration" && (off(), resolve()));
  return promise;
}

describe("TLS", () => {
  test("REST and the WebSocket proxy over TLS: trusted with the CA, refused without it", async () => {
    using dir = tempDir();
    const certs = makeCertificates(dir.path);
    await using core = await startTestCore({ tls_cert: certs.cert, tls_key: certs.key });
    const ca = readFileSync(certs.ca, "utf8");
    const ok = await fetch(`https://127.0.0.1:${core.ports.api}/health`, { tls: { ca } } as RequestInit);
    expect(await ok.json()).toEqual({ status: "ok" });
    expect(fetch(`https://127.0.0.1:${core.ports.api}/health`)).rejects.toThrow();
    expect(fetch(`http://127.0.0.1:${core.ports.api}/health`)).rejects.toThrow();
    const ws = new WebSocket(`wss://127.0.0.1:${core.ports.ws}/`, { tls: { ca } } as any);
    await new Promise<void>((resolve, reject) => ((ws.onopen = () => resolve()), (ws.onerror = () => reject(new Error("wss failed")))));
    ws.close();
  });

  test("a node verifies Core's certificate against its CA file", async () => {
    using dir = tempDir();
    const certs = makeCertificates(dir.path);
    await using core = await startTestCore({ tls_cert: certs.cert, tls_key: certs.key });
    const registered = nodeRegistered(core);
    const node = await startNode(
      { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: join(dir.path, "node"), relay_port: 0, log_level: "silent", tls_ca: certs.ca, reconnect_min_ms: 10, reconnect_max_ms: 100 },
      silentLogger(),
    );
    try {
      await registered;
    } finally {
      await node.stop();
    }
    // With another CA the node's TLS settings refuse Core's certificate.
    using other = tempDir();
    const wrong = clientTls({ tls_ca: makeCertificates(other.path).ca, tls_cert: "", tls_key: "" })!;
    const outcome = Promise.withResolvers<string>();
    await Bun.connect({
      hostname: "127.0.0.1",
      port: core.ports.node,
      tls: { ...wrong, serverName: "127.0.0.1" },
      socket: { data() {}, handshake: (_s, ok, err) => outcome.resolve(ok ? "trusted" : (err?.message ?? "refused")), close: () => outcome.resolve("closed"), error: (_s, e) => outcome.resolve(e.message) },
    }).catch((e: Error) => outcome.resolve(e.message));
    expect(await outcome.promise).not.toBe("trusted");
  });

  test("mutual TLS: with a CA configured, Core requires a client certificate it signed", async () => {
    using dir = tempDir();
    const certs = makeCertificates(dir.path);
    await using core = await startTestCore({ tls_cert: certs.cert, tls_key: certs.key, tls_ca: certs.ca });
    const ca = readFileSync(certs.ca, "utf8");
    const closed = Promise.withResolvers<string>();
    const anon = await Bun.connect({
      hostname: "127.0.0.1",
      port: core.ports.node,
      tls: { ca },
      socket: { data() {}, close: () => closed.resolve("closed"), error: (_s, e) => closed.resolve(e.message), handshake: (_s, ok, err) => void (!ok && closed.resolve(err?.message ?? "handshake failed")) },
    }).catch((e: Error) => (closed.resolve(e.message), null));
    anon?.write('{"version":2,"message":{"NodeRegistration":{"node_id":1,"node_name":"x","node_type":"Full"}}}\n');
    await closed.promise;
    expect(core.registry.listNodes()).toEqual([]);

    const registered = nodeRegistered(core);
    const node = await startNode(
      {
        core: `127.0.0.1:${core.ports.node}`,
        events: `127.0.0.1:${core.ports.event}`,
        data: join(dir.path, "node"),
        relay_port: 0,
        log_level: "silent",
        tls_ca: certs.ca,
        tls_cert: certs.clientCert,
        tls_key: certs.clientKey,
        reconnect_min_ms: 10,
        reconnect_max_ms: 100,
      },
      silentLogger(),
    );
    try {
      await registered;
      expect(core.registry.listNodes()).toHaveLength(1);
    } finally {
      await node.stop();
    }
  });
});
