/** Install step of the web kind: makes the pot's TLS certificate in the current folder (the pot's), for its configured host name. */
import manifest from "../../../catalogue/web/manifest.json";
import { ConfigError, loadConfig } from "../shared/config.ts";
import { CERT_FILE, ensureCertificate } from "./certificate.ts";

let hostname: string;
try {
  hostname = loadConfig(manifest).hostname;
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`web: ${err.message}\n`);
  process.exit(2);
}
const { created } = ensureCertificate(process.cwd(), hostname);
process.stdout.write(created ? `created ${CERT_FILE} for ${hostname}\n` : "certificate already present\n");
