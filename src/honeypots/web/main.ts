/** Entry point of the web kind (web exploit honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/web/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startWeb } from "./server.ts";

await runPot(manifest, startWeb);
