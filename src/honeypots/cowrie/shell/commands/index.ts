import type { Command } from "../shell.ts";
import { ENCODING_COMMANDS } from "./base64.ts";
import { FILE_COMMANDS } from "./files.ts";
import { NETWORK_COMMANDS } from "./network.ts";
import { PROCESS_COMMANDS } from "./ps.ts";
import { SYSTEM_COMMANDS } from "./system.ts";
import { TEXT_COMMANDS } from "./text.ts";

/** A Map, not an object: a command named "constructor" or "__proto__" must not find Object's. */
const COMMANDS = new Map<string, Command>(Object.entries({ ...SYSTEM_COMMANDS, ...PROCESS_COMMANDS, ...FILE_COMMANDS, ...TEXT_COMMANDS, ...ENCODING_COMMANDS, ...NETWORK_COMMANDS }));

/** Every command the fake shell knows; anything else is "command not found" and an event. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.get(name);
}
