/**
 * Web pages must not drive a loopback Core through the operator's browser: cross-origin
 * WebSockets, form/text POSTs that need no preflight, and DNS rebinding (a foreign Host).
 * Clients that are not browsers (CLI, curl, nodes, the standalone proxy) keep working.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCoreConfig } from "../../src/config";
import { Security } from "../../src/core/auth";
import { startStandaloneProxy } from "../../src/core/proxy/standalone";
import { silentLogger } from "../../src/log";
import { BIG_ID, ROOT, WsClient, getJson, registerNode, startTestCore } from "../helpers";
import { requireTool } from "../helpers/clients";

const EVIL = "http://evil.example";
const install = { InstallPot: { pot_id: "web-01", honeypot_type: "cowrie" } };

/** The status line and body of a WebSocket upgrade request sent by hand, as a browser sends it. */
async function upgrade(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const done = Promise.withResolvers<string>();
  let text = "";
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, chunk) {
        text += chunk.toString();
        const end = text.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = /content-length: *(\d+)/i.exec(text.slice(0, end));
        if (!length || text.length - end - 4 >= Number(length[1])) done.resolve(text);
      },
      close: () => done.resolve(text),
    },
  });
  const lines = [`GET ${path} HTTP/1.1`, "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="];
  for (const [k, v] of Object.entries({ host: `127.0.0.1:${port}`, ...headers })) lines.push(`${k}: ${v}`);
  socket.write(lines.join("\r\n") + "\r\n\r\n");
  const response = await done.promise;
  socket.end();
  return { status: Number(response.split(" ")[1]), body: response.slice(response.indexOf("\r\n\r\n") + 4) };
}

const curl = async (args: string[]) => {
  const p = Bun.spawn(["curl", "-s", "-o", "-", "-w", "\n%{http_code}", ...args], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const nl = out.lastIndexOf("\n");
  return { status: Number(out.slice(nl + 1)), body: out.slice(0, nl) };
};

describe("WebSocket upgrades refuse a foreign browser Origin", () => {
  test("9003 and /api/v1/stream: 403 for another origin, open for Core's own, a configured one or none", async () => {
    await using core = await startTestCore({ allowed_origins: ["https://console.example.org"] });
    const own = `http://127.0.0.1:${core.ports.api}`;
    for (const [port, path] of [
      [core.ports.ws, "/"],
      [core.ports.api, "/api/v1/stream"],
    ] as const) {
      for (const origin of [EVIL, "null", `http://127.0.0.1:8080`, `http://localhost.evil.example:${core.ports.api}`]) {
        const refused = await upgrade(port, path, { origin });
        expect(refused.status).toBe(403);
        expect(JSON.parse(refused.body).error.code).toBe("forbidden_origin");
      }
      for (const origin of [own, `http://localhost:${core.ports.ws}`, "https://console.example.org", null]) {
        expect((await upgrade(port, path, origin === null ? {} : { origin })).status).toBe(101);
      }
    }
  });

  test("a socket opened with a foreign Origin never gets to send InstallPot; Core's own page and the CLI do", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    expect(WsClient.connect(core.ws, { headers: { origin: EVIL } })).rejects.toThrow();
    using mine = await WsClient.connect(core.ws, { headers: { origin: `http://127.0.0.1:${core.ports.api}` } });
    mine.send({ node_id: BIG_ID, command: install });
    expect(await mine.nextKind("CommandAck")).toMatchObject({ accepted: true });
    using cli = await WsClient.connect(core.ws);
    cli.send({ node_id: BIG_ID, command: { StopPot: "web-01" } });
    expect(await cli.nextKind("CommandAck")).toMatchObject({ accepted: true });
    expect((await node.nextKind("NodeCommand")).command).toEqual(install);
  });
});

describe("state-changing REST takes application/json only", () => {
  test("form, text and multipart POSTs get 415 and never reach the node; JSON from curl does", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const url = `${core.api}/api/v1/nodes/${BIG_ID}/commands`;
    const body = JSON.stringify(install);
    for (const type of ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"]) {
      const res = await getJson(url, { method: "POST", headers: { "content-type": type }, body });
      expect({ type, status: res.status, code: res.body.error.code }).toEqual({ type, status: 415, code: "unsupported_media_type" });
    }
    // curl's -d sends form encoding unless told otherwise.
    expect((await curl(["-d", body, url])).status).toBe(415);
    // A JSON POST from a foreign page (it would need a CORS preflight first) is refused too.
    expect((await getJson(url, { method: "POST", headers: { "content-type": "application/json", origin: EVIL }, body })).status).toBe(403);
    const ok = await curl(["-H", "content-type: application/json; charset=utf-8", "-d", JSON.stringify({ DeployPot: "web-01" }), url]);
    expect(ok.status).toBe(202);
    expect((await node.nextKind("NodeCommand")).command).toEqual({ DeployPot: "web-01" });
  });
});

describe("a Host that is not Core's gets 421 (DNS rebinding)", () => {
  test("REST, Swagger and the proxy answer loopback names and allowed_hosts only", async () => {
    await using core = await startTestCore({ allowed_hosts: ["honeybee.example"] });
    const port = core.ports.api;
    for (const path of ["/health", "/swagger", "/swagger/json", "/api/v1/nodes", "/api/v1/events"]) {
      const res = await curl(["-H", `Host: evil.example:${port}`, `${core.api}${path}`]);
      expect({ path, status: res.status }).toEqual({ path, status: 421 });
      expect(JSON.parse(res.body).error.code).toBe("misdirected_request");
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `honeybee.example:${port}`, "HoneyBee.Example."]) {
        expect({ path, host, status: (await curl(["-H", `Host: ${host}`, `${core.api}${path}`])).status }).toEqual({ path, host, status: 200 });
      }
    }
    const proxied = await upgrade(core.ports.ws, "/", { host: `evil.example:${core.ports.ws}`, origin: `http://evil.example:${core.ports.ws}` });
    expect(proxied.status).toBe(421);
    expect((await upgrade(core.ports.ws, "/", { host: `localhost:${core.ports.ws}` })).status).toBe(101);
  });

  test("bound to every address, Core answers to each of its addresses and its host name", async () => {
    await using core = await startTestCore({ host: "0.0.0.0", insecure: true });
    const port = core.ports.api;
    const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => (a.family === "IPv6" ? `[${a.address}]` : a.address)));
    for (const host of [...own, hostname()]) {
      expect({ host, status: (await curl(["-H", `Host: ${host}:${port}`, `http://127.0.0.1:${port}/health`])).status }).toEqual({ host, status: 200 });
    }
    expect((await curl(["-H", `Host: evil.example:${port}`, `http://127.0.0.1:${port}/health`])).status).toBe(421);
  });

  test("the standalone proxy and the CLI still work against a guarded Core", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const proxy = startStandaloneProxy({
      backend: `ws://localhost:${core.ports.api}`,
      host: "127.0.0.1",
      port: 0,
      maxMessageBytes: 1 << 20,
      backpressureBytes: 1 << 22,
      security: new Security(defaultCoreConfig()),
      logger: silentLogger(),
    });
    try {
      await proxy.connected();
      using ws = await WsClient.connect(`ws://127.0.0.1:${proxy.port}`);
      ws.send({ node_id: BIG_ID, command: { DeployPot: "web-01" } });
      expect(await ws.nextKind("CommandAck")).toMatchObject({ accepted: true });
      expect((await node.nextKind("NodeCommand")).command).toEqual({ DeployPot: "web-01" });
    } finally {
      proxy.stop();
    }
    const cli = Bun.spawn([join(ROOT, "bin", "honeybee"), "start", String(BIG_ID), "cli-01", "--no-wait", "--api", core.api, "--ws", core.ws], { stdout: "pipe", stderr: "pipe" });
    expect((await node.nextKind("NodeCommand")).command).toEqual({ DeployPot: "cli-01" });
    expect(await cli.exited).toBe(0);
  });
});


test("a real page on another origin in headless Chromium cannot drive Core", async () => {
  // Debian's chromium: `npm test` installs it when it is missing (scripts/test-deps.ts).
  const chromium = requireTool("chromium");
  await using core = await startTestCore();
  using node = await registerNode(core);
  // The attacker's page: another origin (another port) on the same machine.
  const page = `<!doctype html><body><pre id="out">running</pre><script>
    const out = document.getElementById("out");
    const log = (s) => (out.textContent += "\\n" + s);
    const body = ${JSON.stringify(JSON.stringify(install))};
    const url = "http://127.0.0.1:${core.ports.api}/api/v1/nodes/${BIG_ID}/commands";
    Promise.all([
      fetch(url, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body }).then(() => log("text sent"), () => log("text failed")),
      fetch(url, { method: "POST", mode: "no-cors", headers: { "content-type": "application/x-www-form-urlencoded" }, body }).then(() => log("form sent"), () => log("form failed")),
      fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body }).then(() => log("json read"), () => log("json blocked")),
      new Promise((done) => {
        const ws = new WebSocket("ws://127.0.0.1:${core.ports.ws}/");
        ws.onopen = () => { ws.send(JSON.stringify({ node_id: "${BIG_ID}", command: ${JSON.stringify(install)} })); log("ws open"); };
        ws.onmessage = (m) => log("ws message " + m.data);
        ws.onclose = () => { log("ws closed"); done(); };
      }),
    ]).then(() => log("done"));
  </script></body>`;
  const site = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(page, { headers: { "content-type": "text/html" } }) });
  const profile = mkdtempSync(join(tmpdir(), "honeybee-chromium-"));
  try {
    const proc = Bun.spawn(
      [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`, "--virtual-time-budget=10000", "--dump-dom", `http://127.0.0.1:${site.port}/`],
      { stdout: "pipe", stderr: "ignore" },
    );
    const dom = await new Response(proc.stdout).text();
    await proc.exited;
    // What the page saw: its no-cors POSTs go out (opaque answers), the JSON one needs a
    // preflight Core never grants, and the socket closes without opening.
    const seen = /<pre id="out">([^<]*)<\/pre>/.exec(dom)?.[1]?.split("\n").sort();
    expect(seen).toEqual(["done", "form sent", "json blocked", "running", "text sent", "ws closed"]);
    // The node gets the next command Core sends, and it is not one of the page's.
    const ok = await getJson(`${core.api}/api/v1/nodes/${BIG_ID}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ DeployPot: "after-page" }) });
    expect(ok.status).toBe(202);
    expect((await node.nextKind("NodeCommand")).command).toEqual({ DeployPot: "after-page" });
  } finally {
    site.stop(true);
    rmSync(profile, { recursive: true, force: true });
  }
});
