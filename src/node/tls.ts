/**
 * TLS towards Core: verify Core's certificate against the configured CA (never accept an
 * unverified one), and present a client certificate when Core asks for mutual TLS.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "../config";
import type { NodeConfig } from "./config";

export interface ClientTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: true;
}

export function clientTls(config: Pick<NodeConfig, "tls_ca" | "tls_cert" | "tls_key">): ClientTls | undefined {
  if (!config.tls_ca && !config.tls_cert) return undefined;
  if (!config.tls_cert !== !config.tls_key) throw new ConfigError("tls_cert and tls_key go together: set both or neither");
  const read = (path: string, key: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch (e) {
      throw new ConfigError(`${key} ${path} cannot be read: ${(e as Error).message}`);
    }
  };
  return {
    ca: config.tls_ca ? read(config.tls_ca, "tls_ca") : undefined,
    cert: config.tls_cert ? read(config.tls_cert, "tls_cert") : undefined,
    key: config.tls_key ? read(config.tls_key, "tls_key") : undefined,
    rejectUnauthorized: true,
  };
}
