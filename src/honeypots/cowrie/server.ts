/** Starts the cowrie kind: SSH and Telnet listeners sharing one userdb and one event sink. */
import type manifest from "../../../catalogue/cowrie/manifest.json";
import { ConfigError, parseByteCount, parsePort, parsePositiveInt } from "../shared/config.ts";
import { Outbox } from "../shared/outbox.ts";
import { Fetcher } from "./downloads/fetcher.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { ensureHostKeys } from "./hostkey.ts";
import { listen } from "../shared/listener.ts";
import { createSshServer } from "./ssh.ts";
import { telnetConnection } from "./telnet.ts";
import { parseUserDb } from "./userdb.ts";

/** The canonical tty's line limit (N_TTY_BUF_SIZE - 1): what a real shell can be sent per line. */
const MAX_LINE = 4095;
/** Bytes a session may send in all; far more than any bot's script, far less than a flood. */
const MAX_SESSION_INPUT = 1024 * 1024;
/** The largest recording Core takes (MAX_RECORDING_BYTES, docs/protocol.md#sessionrecording). */
const MAX_TTY_BYTES = 4 * 1024 * 1024;

export async function startCowrie({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const hostname = config.hostname;
  const userdb = parseUserDb(config.credentials);
  const maxAuthTries = parsePositiveInt("max_auth_tries", config.max_auth_tries);
  const loginTimeoutMs = parsePositiveInt("login_timeout", config.login_timeout) * 1000;
  const common = {
    host: config.listen_address,
    maxConnections: parsePositiveInt("max_connections", config.max_connections),
    idleMs: parsePositiveInt("idle_timeout", config.idle_timeout) * 1000,
    logger,
  };
  const limits = { maxLine: MAX_LINE, maxInput: MAX_SESSION_INPUT };
  const ttyMax = Number(config.tty_max_bytes ?? "0");
  if (!(ttyMax <= MAX_TTY_BYTES)) throw new ConfigError(`tty_max_bytes must be at most ${MAX_TTY_BYTES} (what Core takes), got ${JSON.stringify(config.tty_max_bytes)}`);
  const ttylog = ttyMax > 0 ? { dir: config.tty_path || "tty", maxBytes: ttyMax } : null;

  const keys = ensureHostKeys(process.cwd());
  if (keys.created.length > 0) logger.info({ files: keys.created }, "generated missing host keys");
  const downloadMaxBytes = parsePositiveInt("download_max_bytes", config.download_max_bytes);
  const outbox = new Outbox(process.cwd(), parseByteCount("outbox_max_bytes", config.outbox_max_bytes));
  const fetcher = new Fetcher({
    enabled: flag("download", config.download),
    maxBytes: downloadMaxBytes,
    timeoutMs: parsePositiveInt("download_timeout", config.download_timeout) * 1000,
    allowPrivate: flag("download_private", config.download_private),
    outbox,
  });
  const session = { hostname, userdb, maxAuthTries, loginTimeoutMs, limits, ttylog, sink, logger, fetcher, downloadMaxBytes, outbox };
  const ssh = createSshServer({ ...session, hostKeys: keys.privateKeys, version: config.ssh_version });

  const sshListener = await listen({ ...common, name: "ssh", port: parsePort("ssh_port", config.ssh_port) }, (socket) => ssh.accept(socket));
  const telnetListener = await listen({ ...common, name: "telnet", port: parsePort("telnet_port", config.telnet_port) }, (socket) =>
    telnetConnection(socket, session),
  ).catch(async (err) => {
    await sshListener.close();
    throw err;
  });

  return {
    ports: { ssh: sshListener.port, telnet: telnetListener.port },
    async stop() {
      await Promise.all([sshListener.close(), telnetListener.close()]);
    },
  };
}

function flag(key: string, value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ConfigError(`config key ${key} must be true or false, got "${value}"`);
}
