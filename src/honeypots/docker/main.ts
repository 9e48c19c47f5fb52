/** Entry point of the docker kind (exposed Docker Engine API honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/docker/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startDocker } from "./server.ts";

await runPot(manifest, startDocker);
