/** Entry point of the tcp kind (catch-all TCP honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/tcp/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startTcp } from "./server.ts";

await runPot(manifest, startTcp);
