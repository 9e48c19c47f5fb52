/** Entry point of the honnypotter kind (WordPress login honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/honnypotter/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startHonnypotter } from "./server.ts";

await runPot(manifest, startHonnypotter);
