/** Starts the mysql kind: one bounded listener, one set of accounts, one catalogue for all clients. */
import { createPrivateKey } from "node:crypto";
import type manifest from "../../../catalogue/mysql/manifest.json";
import { ConfigError, parsePort, parsePositiveInt } from "../shared/config.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { listen, listenerBounds } from "../shared/listener.ts";
import { PotSession } from "../shared/session.ts";
import { Accounts, ensureRsaKeys, newScramble } from "./auth.ts";
import { Catalog } from "./catalog.ts";
import { MysqlConnection, type MysqlServer } from "./connection.ts";

/** The largest payload one packet may carry: 16 MiB - 1, past which MySQL splits a message. */
const PACKET_LIMIT = 0xfffffe;
/** Passwords tried against every failed login's answer; each costs one hash per login. */
const MAX_GUESSES = 1000;

export async function startMysql({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const maxPacket = parsePositiveInt("max_packet", config.max_packet);
  if (maxPacket > PACKET_LIMIT) throw new ConfigError(`config key max_packet must be at most ${PACKET_LIMIT}, got "${config.max_packet}"`);
  const guesses = config.password_guesses.split(",").filter((g) => g !== "");
  if (guesses.length > MAX_GUESSES) throw new ConfigError(`config key password_guesses holds ${guesses.length} passwords; at most ${MAX_GUESSES}`);
  const port = parsePort("mysql_port", config.mysql_port);

  const keys = ensureRsaKeys(process.cwd());
  const privateKey = createPrivateKey(keys.privatePem);
  const server: MysqlServer = {
    version: config.version,
    authPlugin: config.auth_plugin,
    accounts: new Accounts(config.credentials, guesses),
    catalog: new Catalog({
      version: config.version,
      hostname: config.hostname,
      port: port || 3306,
      baitDatabase: config.bait_database,
      authPlugin: config.auth_plugin,
      // A server up for days, as one found on the internet usually is, not one started a second ago.
      startedAt: Date.now() - (2 + Math.random() * 40) * 86_400_000,
    }),
    rsa: { publicPem: keys.publicPem, privateKey, bytes: (privateKey.asymmetricKeyDetails?.modulusLength ?? 2048) / 8 },
    maxPacket,
    loginTimeoutMs: parsePositiveInt("login_timeout", config.login_timeout) * 1000,
  };
  // Ids go up from where a server that has been up a while would be, as mysqld's thread ids do.
  let connectionId = 8 + Math.floor(Math.random() * 400);

  const listener = await listen(
    { ...listenerBounds(config, logger), name: "mysql", port },
    (socket) => {
      const session = PotSession.accepted(socket, "mysql", "mysql", sink);
      new MysqlConnection(socket, session, server, connectionId++, newScramble());
    },
  );
  return {
    ports: { mysql: listener.port },
    async stop() {
      await listener.close();
    },
  };
}
