/**
 * One client of the fake MySQL server, from the greeting to the last query: the login exchange
 * (with a switch to the accounts' plugin and caching_sha2_password's RSA full authentication,
 * which hands over the password itself), then commands answered from the catalogue. Every login
 * and every statement becomes an event; nothing the client sends is ever run.
 */
import type { KeyObject } from "node:crypto";
import type { Socket } from "node:net";
import { type Accounts, CACHING_SHA2, CLEAR, cleartext, decryptPassword, FAST_AUTH_SUCCESS, NATIVE, type PasswordSource, PERFORM_FULL_AUTHENTICATION, type Proof, REQUEST_PUBLIC_KEY } from "./auth.ts";
import type { Catalog } from "./catalog.ts";
import { decodeHandshakeResponse, encodeAuthMoreData, encodeAuthSwitch, encodeHandshake, type HandshakeResponse } from "./handshake.ts";
import { errors, type ErrorOutcome, type Outcome } from "./outcome.ts";
import { CLIENT, type Column, decodeCommand, encodeColumn, encodeEof, encodeErr, encodeOk, encodeResultSet, frame, type Packet, readPackets, SERVER_CAPABILITIES, SERVER_STATUS, text, TYPE } from "./packets.ts";
import { runQuery, type SqlSession, statistics } from "./sql.ts";
import { InputBuffer, type PotSession } from "../shared/session.ts";

export interface MysqlServer {
  version: string;
  /** The accounts' plugin, named in the greeting (default_authentication_plugin). */
  authPlugin: string;
  accounts: Accounts;
  catalog: Catalog;
  rsa: { publicPem: string; privateKey: KeyObject; bytes: number };
  maxPacket: number;
  loginTimeoutMs: number;
}

/** SQL kept in a command.input event; a longer query is cut there and marked `truncated`. */
const MAX_INPUT_CHARS = 16384;
/** Bytes a session may send in all: far more than any bot's session, far less than a flood. */
const MAX_SESSION_INPUT = 8 * 1024 * 1024;
/** How long a connection refused with an error stays to drain the client's input. */
const LINGER_MS = 2000;
/** Replies a client leaves unread before this connection stops reading its requests. */
const MAX_PENDING_WRITE = 1024 * 1024;

type State = "greeting" | "switch" | "full" | "rsa" | "command" | "closed";

/** Flat fields of the well-known connection attributes, beside the whole map. */
const ATTR_FIELDS: Record<string, string> = {
  _client_name: "client_name",
  _client_version: "client_version",
  _os: "client_os",
  _platform: "client_platform",
  program_name: "client_program",
};

export class MysqlConnection {
  private readonly input: InputBuffer;
  private state: State = "greeting";
  private seq = 0;
  private capabilities = 0;
  private hello: HandshakeResponse | null = null;
  /** The client's first hashed answer, when it was computed for a plugin this server checks. */
  private firstProof: Proof | null = null;
  private switchedTo: string | null = null;
  private lastResponse: Buffer = Buffer.alloc(0);
  private readonly sql: SqlSession;
  private readonly loginTimer: ReturnType<typeof setTimeout>;
  private timedOut = false;
  private received = 0;

  constructor(
    private readonly socket: Socket,
    private readonly session: PotSession,
    private readonly server: MysqlServer,
    connectionId: number,
    private readonly scramble: Buffer,
  ) {
    this.input = new InputBuffer(server.maxPacket + 4);
    const ip = session.endpoint.src_ip;
    this.sql = { user: "", host: ip === "127.0.0.1" || ip === "::1" ? "localhost" : ip, database: null, connectionId };
    // mysqld's connect_timeout: the login must be over by then, or the connection is dropped.
    this.loginTimer = setTimeout(() => {
      this.timedOut = true;
      socket.destroy();
    }, server.loginTimeoutMs);
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("drain", () => socket.resume());
    socket.on("close", () => this.closed());
    this.send(
      encodeHandshake({ version: server.version, connectionId, scramble, capabilities: SERVER_CAPABILITIES, status: SERVER_STATUS.AUTOCOMMIT, plugin: server.authPlugin }),
    );
  }

  private get open(): boolean {
    return this.state !== "closed";
  }

  private send(...payloads: Buffer[]): void {
    if (this.socket.destroyed) return;
    this.socket.write(Buffer.concat(payloads.map((p) => frame(this.seq++, p))));
  }

  private fail(err: ErrorOutcome): void {
    this.send(encodeErr(err.code, err.state, err.message, this.capabilities === 0 || (this.capabilities & CLIENT.PROTOCOL_41) !== 0));
    this.state = "closed";
    this.socket.end();
    // What the client still sends is read and dropped for a moment before the socket goes: closing
    // with unread input would reset the connection, and the client could lose the error it was sent.
    setTimeout(() => this.socket.destroy(), LINGER_MS).unref();
  }

  private receive(chunk: Buffer): void {
    this.received += chunk.length;
    if (this.received > MAX_SESSION_INPUT) {
      this.state = "closed";
      this.socket.destroy();
      return;
    }
    let rest = chunk;
    while (rest.length > 0 && this.open) {
      const room = this.input.max - this.input.length;
      this.input.push(rest.subarray(0, room));
      rest = rest.subarray(room);
      const { packets, used, tooLong } = readPackets(this.input.view(), this.server.maxPacket);
      this.input.consume(used);
      for (const packet of packets) {
        if (!this.open) return;
        this.seq = packet.seq + 1;
        try {
          this.handle(packet);
        } catch {
          // A packet no decoder foresaw costs this connection only, with the error mysqld would send.
          this.fail(this.state === "command" ? errors.unknownCommand() : errors.badHandshake());
        }
      }
      if (tooLong && this.open) return this.fail(errors.packetTooLarge());
    }
    if (this.socket.writableLength > MAX_PENDING_WRITE) this.socket.pause();
  }

  private handle(packet: Packet): void {
    switch (this.state) {
      case "greeting":
        return this.greeted(packet.payload);
      case "switch":
        return this.proceed(this.server.authPlugin, packet.payload);
      case "full":
        return this.fullAuthentication(packet.payload);
      case "rsa":
        return this.decrypted(packet.payload);
      case "command":
        return this.command(packet.payload);
    }
  }

  private greeted(payload: Buffer): void {
    const caps = payload.length >= 4 ? payload.readUInt32LE(0) : 0;
    if (payload.length >= 2 && !(payload.readUInt16LE(0) & CLIENT.PROTOCOL_41)) {
      this.capabilities = payload.readUInt16LE(0);
      return this.fail(errors.oldClient());
    }
    // An SSLRequest: this server offered no TLS, so a client that insists gets what mysqld without SSL sends.
    if (caps & CLIENT.SSL && payload.length === 32) return this.fail(errors.badHandshake());
    const hello = decodeHandshakeResponse(payload);
    this.hello = hello;
    this.capabilities = (hello.capabilities & SERVER_CAPABILITIES) >>> 0;
    this.sql.user = hello.username;
    const plugin = hello.plugin || NATIVE;
    if (plugin === CLEAR) return this.decide({ cleartext: cleartext(hello.authResponse) }, "cleartext", hello.authResponse);
    if ((plugin === NATIVE || plugin === CACHING_SHA2) && hello.authResponse.length > 0) {
      this.firstProof = { plugin, scramble: this.scramble, response: hello.authResponse };
    }
    if (plugin === this.server.authPlugin) return this.proceed(plugin, hello.authResponse);
    // What mysqld does when the client's plugin is not the account's: ask for the account's.
    this.switchedTo = this.server.authPlugin;
    this.state = "switch";
    this.send(encodeAuthSwitch(this.server.authPlugin, this.scramble));
  }

  private proceed(plugin: string, response: Buffer): void {
    this.lastResponse = response;
    const proof: Proof = { plugin, scramble: this.scramble, response };
    if (plugin === CACHING_SHA2 && response.length > 0) {
      // Fast authentication when a candidate matches; otherwise full authentication, which
      // brings the password itself (RSA-encrypted to this server's key, or in the clear).
      if (this.server.accounts.recover(this.sql.user, proof).password === null) {
        this.state = "full";
        this.send(encodeAuthMoreData(Buffer.from([PERFORM_FULL_AUTHENTICATION])));
        return;
      }
      if (this.server.accounts.allows(this.sql.user, proof)) this.send(encodeAuthMoreData(Buffer.from([FAST_AUTH_SUCCESS])));
    }
    this.decide(proof, null, response);
  }

  private fullAuthentication(payload: Buffer): void {
    if (payload.length === 1 && payload[0] === REQUEST_PUBLIC_KEY) {
      this.state = "rsa";
      this.send(encodeAuthMoreData(Buffer.from(this.server.rsa.publicPem)));
      return;
    }
    // A client holding the server's key already sends the encrypted password at once.
    if (payload.length === this.server.rsa.bytes) {
      const password = decryptPassword(this.server.rsa.privateKey, payload, this.scramble);
      if (password !== null) return this.decide({ cleartext: password }, "rsa", payload);
    }
    this.decide({ cleartext: cleartext(payload) }, "cleartext", payload);
  }

  private decrypted(payload: Buffer): void {
    const password = decryptPassword(this.server.rsa.privateKey, payload, this.scramble);
    if (password === null) return this.refuse(null, null, payload, "undecryptable");
    this.decide({ cleartext: password }, "rsa", payload);
  }

  /** The fields every login event of this connection carries. */
  private loginFields(password: string | null, source: PasswordSource | null, response: Uint8Array): Record<string, unknown> {
    const hello = this.hello!;
    const attrs: Record<string, unknown> = {};
    for (const [attr, field] of Object.entries(ATTR_FIELDS)) attrs[field] = hello.attrs[attr] ?? null;
    return {
      username: hello.username,
      password,
      password_source: source,
      database: hello.database || null,
      auth_plugin: hello.plugin,
      auth_switch: this.switchedTo,
      scramble: this.scramble.toString("hex"),
      auth_response: Buffer.from(response).toString("hex"),
      client_capabilities: hello.capabilities,
      ...attrs,
      client_attrs: { ...hello.attrs },
    };
  }

  private decide(proof: Proof, source: PasswordSource | null, response: Uint8Array): void {
    const user = this.sql.user;
    const recovered = this.server.accounts.recover(user, proof);
    const password = recovered.password;
    const how = source ?? recovered.source;
    if (!this.server.accounts.allows(user, proof)) return this.refuse(password, how, response, "denied");
    const db = this.hello!.database || null;
    if (db !== null && !this.server.catalog.hasDatabase(db)) {
      this.refuse(password, how, response, "unknown_database");
      return;
    }
    clearTimeout(this.loginTimer);
    this.session.emit("login.success", { ...this.loginFields(password, how, response), message: `login attempt [${user}/${password ?? "?"}] succeeded` });
    this.sql.database = db;
    this.state = "command";
    this.send(encodeOk({ status: SERVER_STATUS.AUTOCOMMIT }));
  }

  private refuse(password: string | null, source: PasswordSource | null, response: Uint8Array, reason: string): void {
    const user = this.sql.user;
    this.session.emit("login.failed", { ...this.loginFields(password, source, response), reason, message: `login attempt [${user}/${password ?? "?"}] failed` });
    const db = this.hello!.database ?? "";
    this.fail(reason === "unknown_database" ? errors.unknownDatabase(db) : errors.accessDenied(user, this.sql.host, response.length > 0));
  }

  private recordInput(command: string, input: string): void {
    const truncated = input.length > MAX_INPUT_CHARS;
    this.session.emit("command.input", {
      input: truncated ? input.slice(0, MAX_INPUT_CHARS) : input,
      command,
      database: this.sql.database,
      ...(truncated ? { truncated: true, length: input.length } : {}),
    });
  }

  private command(payload: Buffer): void {
    const cmd = decodeCommand(payload);
    const status = SERVER_STATUS.AUTOCOMMIT;
    switch (cmd.kind) {
      case "quit":
        this.state = "closed";
        this.socket.end();
        return;
      case "ping":
      case "reset":
        return this.send(encodeOk({ status }));
      case "statistics":
        return this.send(Buffer.from(statistics(this.server.catalog)));
      case "init_db": {
        const db = text(cmd.schema);
        this.recordInput("init_db", `USE ${db}`);
        return this.reply(runQuery(`USE \`${db.replace(/`/g, "``")}\``, this.sql, this.server.catalog, false));
      }
      case "query": {
        const sql = text(cmd.sql);
        this.recordInput("query", sql);
        return this.reply(runQuery(sql, this.sql, this.server.catalog, (this.capabilities & CLIENT.MULTI_STATEMENTS) !== 0));
      }
      case "prepare":
        this.recordInput("prepare", text(cmd.sql));
        return this.reply([errors.preparedUnsupported()]);
      case "field_list":
        return this.fieldList(text(cmd.table));
      default:
        return this.reply([errors.unknownCommand()]);
    }
  }

  private get deprecateEof(): boolean {
    return (this.capabilities & CLIENT.DEPRECATE_EOF) !== 0;
  }

  /** Columns sized to what they hold, as mysqld reports a result's display widths. */
  private sized(outcome: Extract<Outcome, { kind: "rows" }>): Column[] {
    return outcome.columns.map((c, i) => {
      const widest = outcome.rows.reduce((w, row) => Math.max(w, row[i]?.length ?? 0), c.type === TYPE.LONGLONG ? 21 : 1);
      return { ...c, width: Math.min(widest, 65535) };
    });
  }

  private reply(outcomes: Outcome[]): void {
    const payloads: Buffer[] = [];
    outcomes.forEach((o, i) => {
      const status = SERVER_STATUS.AUTOCOMMIT | (i < outcomes.length - 1 ? SERVER_STATUS.MORE_RESULTS_EXISTS : 0);
      if (o.kind === "ok") payloads.push(encodeOk({ affectedRows: o.affectedRows, status, info: o.info }));
      else if (o.kind === "rows") payloads.push(...encodeResultSet(this.sized(o), o.rows, status, this.deprecateEof));
      else payloads.push(encodeErr(o.code, o.state, o.message));
    });
    this.send(...payloads);
  }

  /** COM_FIELD_LIST, which clients send to complete table and column names. */
  private fieldList(table: string): void {
    const db = this.sql.database;
    if (db === null) return this.reply([errors.noDatabase()]);
    const found = this.server.catalog.table(db, table);
    if (!found) return this.reply([errors.noTable(db, table)]);
    const defs = found.columns.map(([name, type]) => encodeColumn({ name, type: /int/.test(type) ? TYPE.LONGLONG : TYPE.VAR_STRING, schema: db, table }));
    this.send(...defs, this.deprecateEof ? encodeOk({ status: SERVER_STATUS.AUTOCOMMIT, eof: true }) : encodeEof(SERVER_STATUS.AUTOCOMMIT));
  }

  private closed(): void {
    clearTimeout(this.loginTimer);
    const state = this.state;
    this.state = "closed";
    // A client that left in the middle of its login (one that cannot do RSA, a scanner) still tried.
    if (this.hello && (state === "switch" || state === "full" || state === "rsa")) {
      const proof = this.firstProof;
      const recovered = proof ? this.server.accounts.recover(this.sql.user, proof) : { password: null, source: null };
      this.session.emit("login.failed", {
        ...this.loginFields(recovered.password, recovered.source, this.lastResponse.length > 0 ? this.lastResponse : this.hello.authResponse),
        reason: this.timedOut ? "timeout" : "disconnected",
        message: `login attempt [${this.sql.user}/${recovered.password ?? "?"}] failed`,
      });
    }
    this.session.close();
  }
}
