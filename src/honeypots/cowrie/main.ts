/** Entry point of the cowrie kind (SSH and Telnet honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/cowrie/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startCowrie } from "./server.ts";

await runPot(manifest, startCowrie);
