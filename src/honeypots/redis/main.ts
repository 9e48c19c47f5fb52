/** Entry point of the redis kind (exposed Redis 7 honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/redis/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startRedis } from "./server.ts";

await runPot(manifest, startRedis);
