/** Entry point of the mysql kind (MySQL 8.0 server honeypot), run by the node agent in the pot's folder. */
import manifest from "../../../catalogue/mysql/manifest.json";
import { runPot } from "../shared/lifecycle.ts";
import { startMysql } from "./server.ts";

await runPot(manifest, startMysql);
