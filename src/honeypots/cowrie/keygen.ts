/** Install step of the cowrie kind: creates the pot's SSH host keys in the current folder (the pot's). */
import { ensureHostKeys } from "./hostkey.ts";

const { created } = ensureHostKeys(process.cwd());
process.stdout.write(created.length > 0 ? `created ${created.join(", ")}\n` : "host keys already present\n");
