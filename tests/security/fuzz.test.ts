/**
 * Seeded, bounded fuzzing of each of Core's listeners (9001, 9100, 9002, 9003): valid messages
 * mutated a few bytes at a time, garbage, deep nesting, oversized lines, split writes. After
 * each round Core must still serve a well-behaved client, answer only in the documented shapes,
 * and have stored every valid event that was sent between the mutants.
 *
 * `FUZZ_SEED` replays a failing run; `FUZZ_ROUNDS` makes it longer.
 */
import { describe, expect, test } from "bun:test";
import { rng } from "../../bench/ingest-events";
import { parseWithIds } from "../../src/protocol/json";
import { EventStreamClient, getJson, registerNode, startTestCore, until, WsClient } from "../helpers";

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 1);
const MAX_BYTES = 64 * 1024;

const SPECIALS = ["{", "}", "[", "]", '"', "\\", ",", ":", "\u0000", "\r", "\u2028", "é", "𝄞", "\\u0000", "\\ud800", "18446744073709551616", "-1", "1e400", "null", "__proto__", "%00", "\n"];

/** Applies one to three random edits to `s`. */
function mutate(rnd: () => number, s: string): string {
  const edits = 1 + Math.floor(rnd() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rnd() * (s.length + 1));
    const op = Math.floor(rnd() * 6);
    if (op === 0) s = s.slice(0, at) + s.slice(at + 1 + Math.floor(rnd() * 8));
    else if (op === 1) s = s.slice(0, at) + SPECIALS[Math.floor(rnd() * SPECIALS.length)] + s.slice(at);
    else if (op === 2) s = s.slice(0, at);
    else if (op === 3) s = s.slice(0, at) + s.slice(Math.max(0, at - 12), at) + s.slice(at);
    else if (op === 4) s = s.slice(0, at) + String.fromCharCode(Math.floor(rnd() * 0x3000)) + s.slice(at + 1);
    else s = s.replace(/"[a-z_]+"/, `"${SPECIALS[Math.floor(rnd() * SPECIALS.length)]}"`);
  }
  return s;
}

/** Input that is hostile as a whole rather than a few bytes off. */
function hostile(rnd: () => number): string {
  const kind = Math.floor(rnd() * 5);
  if (kind === 0) return "[".repeat(2000 + Math.floor(rnd() * 50_000));
  if (kind === 1) return `{"eventid":"x","data":${'{"a":'.repeat(300)}1${"}".repeat(300)}}`;
  if (kind === 2) return "x".repeat(MAX_BYTES + Math.floor(rnd() * 4096));
  if (kind === 3) return "{".repeat(100) + "x" + "}".repeat(50);
  return Array.from({ length: 200 }, () => String.fromCharCode(Math.floor(rnd() * 256))).join("");
}

const flat = (eventid: string, i: number) =>
  JSON.stringify({ eventid, session: `fz${i}`, src_ip: `198.51.100.${i % 250}`, username: "root", password: `pw${i}`, timestamp: new Date().toISOString(), pot_id: "fuzz-pot", pot_type: "cowrie" });

/** Every line a socket answered with is a Protocol v2 message of a documented kind. */
function expectProtocolLines(lines: string[], kinds: string[]) {
  for (const line of lines) {
    const m = parseWithIds(line) as any;
    expect(m.version).toBe(2);
    const kind = typeof m.message === "string" ? m.message : Object.keys(m.message)[0];
    expect(kinds).toContain(kind);
    if (kind === "Error") expect(Object.keys(m.message.Error).sort()).toEqual(["code", "message"]);
  }
}

/** Events of one type stored, counted over every page. */
async function eventTypeCount(api: string, type: string): Promise<number> {
  let n = 0;
  let cursor: string | null = null;
  do {
    const page = await getJson(`${api}/api/v1/events?event_type=${type}&limit=1000${cursor === null ? "" : `&cursor=${cursor}`}`);
    n += page.body.events.length;
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return n;
}

/** Collects what Core writes on a raw TCP connection. */
async function rawConnection(port: number) {
  const got: string[] = [];
  let text = "";
  const closed = Promise.withResolvers<void>();
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, chunk) => {
        text += chunk.toString();
        let nl: number;
        while ((nl = text.indexOf("\n")) >= 0) {
          got.push(text.slice(0, nl));
          text = text.slice(nl + 1);
        }
      },
      close: () => closed.resolve(),
      error: () => closed.resolve(),
    },
  });
  return { socket, got, closed: closed.promise };
}

describe("fuzzing every listener", () => {
  test("event socket (9100): mutants are refused one line at a time, every valid line between them is stored", async () => {
    await using core = await startTestCore({ max_message_bytes: MAX_BYTES });
    const rnd = rng(SEED);
    let valid = 0;
    const clients: EventStreamClient[] = [];
    for (let c = 0; c < 4; c++) clients.push(await EventStreamClient.connect(core.ports.event, c % 2 ? { acks: true } : undefined));
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < 400; i++) {
        const client = clients[i % clients.length]!;
        const r = rnd();
        const bad = r < 0.05 ? hostile(rnd) : mutate(rnd, flat("fuzz.mutant", i));
        // A mutant may have lost its newline's meaning (an open string): the newline ends it anyway.
        client.send([bad.replaceAll("\n", " "), flat("fuzz.valid", i)]);
        valid++;
      }
    }
    await Promise.all(clients.map((c) => c.written()));
    await until(async () => (await eventTypeCount(core.api, "fuzz.valid")) === valid, `${valid} valid events stored`);
    const stats = (await getJson(`${core.api}/api/v1/stats`)).body.ingest;
    expect(Number(stats.received)).toBe(Number(stats.committed) + Number(stats.rejected) + Number(stats.pending) + Number(stats.duplicates));
    // A client that arrives now is served and acknowledged.
    using fresh = await EventStreamClient.connect(core.ports.event, { acks: true });
    fresh.send(flat("fuzz.after", 1));
    await fresh.ack(1);
    for (const c of clients) c.close();
  });

  test("node channel (9001): garbage before and after registration gets Error answers, a new node still registers", async () => {
    await using core = await startTestCore({ max_message_bytes: MAX_BYTES });
    const rnd = rng(SEED + 1);
    const registration = (id: number) => JSON.stringify({ version: 2, message: { NodeRegistration: { node_id: id, node_name: `fz-${id}`, address: "127.0.0.1", port: 0, node_type: "Agent" } } });
    const potEvent = (i: number) => JSON.stringify({ version: 2, message: { PotEvent: { node_id: 7001, pot_id: "fuzz-pot", pot_type: "cowrie", event_type: "fuzz.mutant", timestamp: new Date().toISOString(), data: { i, src_ip: "203.0.113.9" } } } });
    const conns = await Promise.all([0, 1, 2].map(() => rawConnection(core.ports.node)));
    const registered = await registerNode(core, 7001n, "fz-main");
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < 300; i++) {
        const c = conns[i % conns.length]!;
        const bad = rnd() < 0.05 ? hostile(rnd) : mutate(rnd, i % 2 ? registration(9000 + i) : potEvent(i));
        // Split some writes mid-message, as TCP may.
        const cut = Math.floor(rnd() * bad.length);
        c.socket.write(bad.slice(0, cut));
        c.socket.write(bad.slice(cut) + "\n");
        registered.sendRaw(mutate(rnd, potEvent(i)).replaceAll("\n", " ") + "\n");
      }
    }
    // The registered node's connection is still served: a heartbeat-free check is a valid event.
    registered.send("PotEvent", { node_id: 7001n, pot_id: "fuzz-pot", pot_type: "cowrie", event_type: "fuzz.valid", timestamp: new Date().toISOString(), data: {} });
    await until(async () => (await eventTypeCount(core.api, "fuzz.valid")) === 1, "the registered node's valid event");
    using _late = await registerNode(core, 7002n, "fz-late");
    expect((await getJson(`${core.api}/api/v1/nodes/7002`)).status).toBe(200);
    for (const c of conns) {
      c.socket.end();
      expectProtocolLines(c.got, ["RegistrationAck", "Error"]);
    }
    registered.close();
  });

  test("REST (9002): mutated paths, queries, methods and bodies get statuses below 500 and the error shape", async () => {
    await using core = await startTestCore({ max_message_bytes: MAX_BYTES });
    using node = await registerNode(core, 7003n, "fz-rest");
    const rnd = rng(SEED + 2);
    const paths = ["/health", "/api/v1/nodes", "/api/v1/nodes/7003", "/api/v1/honeypots", "/api/v1/events?limit=5&since=1h", "/api/v1/stats?window=24h", "/api/v1/nodes/7003/commands", "/api/v1/commands/1", "/api/v1/catalogue"];
    const methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"];
    const types = ["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-8"];
    const body = JSON.stringify({ command: { GetPotStatus: "fuzz-pot" } });
    for (let i = 0; i < 300 * ROUNDS; i++) {
      const path = mutate(rnd, paths[i % paths.length]!).toWellFormed().replace(/\s/g, "%20").replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
      const method = methods[Math.floor(rnd() * methods.length)]!;
      let res: Response;
      try {
        res = await fetch(`${core.api}/${path.replace(/^\/+/, "")}`, {
          method,
          headers: { "content-type": types[Math.floor(rnd() * types.length)]! },
          body: method === "GET" || method === "HEAD" ? undefined : mutate(rnd, body),
        });
      } catch {
        continue; // a URL the client itself refuses to send
      }
      const text = await res.text();
      expect(res.status).toBeLessThan(500);
      if (res.status >= 400 && method !== "HEAD") {
        const parsed = JSON.parse(text);
        expect(typeof parsed.error.code).toBe("string");
        expect(typeof parsed.error.message).toBe("string");
      }
    }
    expect((await getJson(`${core.api}/health`)).status).toBe(200);
    node.close();
  });

  test("WebSocket proxy (9003): mutated commands get Error or CommandAck, the feed keeps flowing to others", async () => {
    await using core = await startTestCore({ max_message_bytes: MAX_BYTES });
    using node = await registerNode(core, 7004n, "fz-ws");
    const rnd = rng(SEED + 3);
    const command = JSON.stringify({ version: 2, message: { NodeCommand: { node_id: 7004, command: { GetPotStatus: "fuzz-pot" } } } });
    const fuzzers = await Promise.all([0, 1].map(() => WsClient.connect(core.ws)));
    let sent = 0;
    for (let i = 0; i < 200 * ROUNDS; i++) {
      const ws = fuzzers[i % 2]!;
      if (ws.ws.readyState !== WebSocket.OPEN) continue;
      const r = rnd();
      ws.send(r < 0.05 ? hostile(rnd) : r < 0.1 ? new TextEncoder().encode(mutate(rnd, command)) : mutate(rnd, command));
      sent++;
    }
    expect(sent).toBeGreaterThan(0);
    // Each fuzzer is answered in order: a marker command's ack comes after every earlier answer.
    for (const ws of fuzzers) {
      if (ws.ws.readyState === WebSocket.OPEN) ws.send(command);
      const end = await Promise.race([ws.nextKind("CommandAck", (a) => a.accepted === true), ws.closed]);
      // Only an oversized frame may close a fuzzer's socket, with its own close code.
      if ("code" in end) expect(end.code).toBe(1009);
      for (const m of ws.pending) {
        const kind = Object.keys(m.message)[0] ?? "(no kind)";
        expect(["Error", "CommandAck"]).toContain(kind);
      }
    }
    using watcher = await WsClient.connect(`${core.ws}/?kinds=PotEvent`);
    using events = await EventStreamClient.connect(core.ports.event);
    events.send(flat("fuzz.live", 1));
    const ev = await watcher.nextKind("PotEvent");
    expect(ev.event_type).toBe("fuzz.live");
    for (const ws of fuzzers) ws.close();
    node.close();
  });
});
