/**
 * The redis kind: a Redis 7 server on one TCP port that answers what scanners and worms send,
 * records every command (redis.command.input) and the known attack chains as events of their own,
 * and never writes a file, loads a module, runs a script or connects out.
 */
import { randomBytes, randomInt } from "node:crypto";
import type { Socket } from "node:net";
import type manifest from "../../../catalogue/redis/manifest.json";
import { RateLimitedLog } from "../../net/rate-limited-log.ts";
import { plainIp } from "../shared/address.ts";
import { parseByteCount, parsePort, parsePositiveInt } from "../shared/config.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { listen, listenerBounds } from "../shared/listener.ts";
import { Outbox, OutboxFull } from "../shared/outbox.ts";
import { InputBuffer, PotSession, printable } from "../shared/session.ts";
import { requiredPassword } from "./admin.ts";
import type { Client, Ctx, Effects, ServerFacts } from "./context.ts";
import { execute } from "./dispatch.ts";
import { clip, clipList, renderCommand } from "./render.ts";
import { encode, error, INLINE_MAX, type Limits, parseCommand } from "./resp.ts";
import { AddressStates } from "./state.ts";

/** Bounds of one command, far above what any client sends and far below Redis's 512 MB. */
const MAX_ARGS = 1024;
const MAX_ARG_BYTES = 512 * 1024;
const MAX_COMMAND_BYTES = 1024 * 1024;
/** Unparsed input one connection may hold: one whole command with its headers, and a read more. */
const MAX_BUFFERED = MAX_COMMAND_BYTES + 4 * INLINE_MAX;
/** Replies waiting for a client that does not read: past this, reading stops until they drain. */
const MAX_PENDING_OUTPUT = 1024 * 1024;
/** Attacker addresses whose keyspace and settings are remembered (each up to store_max_bytes). */
const MAX_ADDRESSES = 64;
const DAY_MS = 86_400_000;

/** Upper case for ASCII letters only: a command name is bytes, not text. */
function asciiUpper(bytes: Buffer): Buffer {
  return Buffer.from(bytes.map((b) => (b >= 0x61 && b <= 0x7a ? b - 32 : b)));
}

export async function startRedis({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const maxCommands = parsePositiveInt("max_commands", config.max_commands);
  const outbox = new Outbox(process.cwd(), parseByteCount("outbox_max_bytes", config.outbox_max_bytes));
  const states = new AddressStates(MAX_ADDRESSES, {
    maxBytes: parseByteCount("store_max_bytes", config.store_max_bytes),
    maxKeys: parsePositiveInt("store_max_keys", config.store_max_keys),
  });
  const warnings = new RateLimitedLog(logger, 1, 60_000);
  let connected = () => 0;
  // A server that has been up for weeks, as the ones found exposed usually have.
  const totalConnections = randomInt(2_000, 40_000);
  const server: ServerFacts = {
    version: config.redis_version,
    os: config.os,
    port: 0,
    password: config.password,
    processId: randomInt(600, 4000),
    runId: randomBytes(20).toString("hex"),
    buildId: randomBytes(8).toString("hex"),
    replId: randomBytes(20).toString("hex"),
    startedAt: Date.now() - randomInt(3 * DAY_MS, 60 * DAY_MS),
    totals: { connections: totalConnections, commands: totalConnections * randomInt(4, 12) },
    connectedClients: () => connected(),
  };
  let nextId = randomInt(1_000, 60_000);

  const onSocket = (socket: Socket) => {
    const state = states.acquire(plainIp(socket.remoteAddress));
    server.totals.connections++;
    const session = PotSession.accepted(socket, "redis", "redis", sink);
    const now = Date.now();
    const client: Client = {
      id: nextId++,
      addr: `${plainIp(socket.remoteAddress)}:${socket.remotePort ?? 0}`,
      laddr: `${plainIp(socket.localAddress)}:${socket.localPort ?? 0}`,
      fd: 8 + connected(),
      createdAt: now,
      lastInteraction: now,
      resp: 2,
      db: 0,
      name: "",
      user: "default",
      authenticated: false,
      libName: "",
      libVer: "",
      multi: null,
      lastCommand: "NULL",
    };
    const effects: Effects = {
      event: (name, fields) => session.emit(name, fields),
      capture(bytes, meta) {
        try {
          const saved = outbox.put(bytes, { ...meta, session: session.id });
          return { shasum: saved.sha256, outfile: saved.outfile, size: saved.size };
        } catch (err) {
          if (!(err instanceof OutboxFull)) warnings.warn("outbox", { err }, "cannot keep a captured file");
          // Not kept, still recorded with its hash.
          return { shasum: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"), outfile: null, size: bytes.length };
        }
      },
    };
    const ctx: Ctx = { client, server, state, effects, now: Date.now };
    client.authenticated = requiredPassword(ctx) === "";
    const input = new InputBuffer(MAX_BUFFERED);
    let commands = 0;
    let ending = false;

    const finish = (last?: Buffer) => {
      ending = true;
      if (last) socket.end(last);
      else socket.end();
    };

    const limits = (): Limits => ({
      maxArgs: MAX_ARGS,
      maxArgBytes: MAX_ARG_BYTES,
      maxCommandBytes: MAX_COMMAND_BYTES,
      unauthenticated: !client.authenticated && requiredPassword(ctx) !== "",
    });

    const handle = (args: Buffer[]) => {
      client.lastInteraction = Date.now();
      const line = renderCommand(args);
      const rest = clipList(args.slice(1));
      session.emit("command.input", {
        input: line.value,
        command: clip(asciiUpper(args[0]!), 64).value,
        args: rest.value,
        ...(line.truncated || rest.truncated ? { truncated: true } : {}),
      });
      const outcome = execute(ctx, args);
      if (outcome.reply) socket.write(encode(outcome.reply, client.resp));
      if (outcome.close) finish();
    };

    const pump = () => {
      while (!ending) {
        if (socket.writableLength > MAX_PENDING_OUTPUT) {
          socket.pause();
          return;
        }
        const parsed = parseCommand(input.view(), limits());
        if (parsed.kind === "incomplete") return;
        if (parsed.kind === "error") {
          session.emit("protocol.error", { error: parsed.message, input: printable(input.view().subarray(0, 128)) });
          finish(encode(error(`ERR ${parsed.message}`), client.resp));
          return;
        }
        input.consume(parsed.size);
        if (parsed.kind === "skip") continue;
        if (++commands > maxCommands) {
          // Every command becomes an event: a connection that sends this many is a flood.
          session.emit("session.limit", { limit: "max_commands", max: maxCommands });
          finish();
          return;
        }
        handle(parsed.args);
      }
    };

    /** A throw in one connection's handling costs that connection only. */
    const safely = (step: () => void) => {
      try {
        step();
      } catch (err) {
        warnings.warn("command", { err }, "command failed");
        socket.destroy();
      }
    };
    socket.on("data", (chunk: Buffer) =>
      safely(() => {
        if (ending) return;
        if (!input.push(chunk)) {
          session.emit("session.limit", { limit: "input_bytes", max: MAX_BUFFERED });
          socket.destroy();
          return;
        }
        pump();
      }),
    );
    socket.on("drain", () =>
      safely(() => {
        if (ending || !socket.isPaused()) return;
        socket.resume();
        pump();
      }),
    );
    socket.once("close", () => {
      session.close();
      states.release(state);
    });
  };

  const listener = await listen(
    { ...listenerBounds(config, logger), name: "redis", port: parsePort("redis_port", config.redis_port) },
    onSocket,
  );
  server.port = listener.port;
  connected = () => listener.open;
  return {
    ports: { redis: listener.port },
    stop: () => listener.close(),
  };
}
