/** Entry point of the adb kind (Android Debug Bridge honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/adb/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startAdb } from "./server.ts";

await runPot(manifest, startAdb);
