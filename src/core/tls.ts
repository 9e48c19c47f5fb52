/**
 * TLS for every listener, from PEM files named in config. With a CA, TCP listeners (nodes,
 * events) also require a client certificate signed by it: mutual TLS.
 */
import { readFileSync } from "node:fs";
import { ConfigError, type CoreConfig } from "../config";

export interface TlsOptions {
  cert: string;
  key: string;
  ca?: string;
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
}

function read(path: string, key: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`${key} ${path} cannot be read: ${(e as Error).message}`);
  }
}

/** TLS options for a listener, or undefined when TLS is off; `mutual` asks for client certificates. */
export function tlsOptions(config: CoreConfig, mutual: boolean): TlsOptions | undefined {
  if (!config.tls_cert) return undefined;
  const tls: TlsOptions = { cert: read(config.tls_cert, "tls_cert"), key: read(config.tls_key, "tls_key") };
  if (config.tls_ca && mutual) {
    tls.ca = read(config.tls_ca, "tls_ca");
    tls.requestCert = true;
    tls.rejectUnauthorized = true;
  }
  return tls;
}
