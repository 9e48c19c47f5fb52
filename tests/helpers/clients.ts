/**
 * The real clients the tests drive (OpenSSH, curl, chromium, ...): found on PATH, or a clear
 * failure naming the package; `npm test` installs them first (scripts/test-deps.ts).
 */
import { join } from "node:path";
import { TEST_TOOLS, findTool } from "../../scripts/test-deps";

/** The path of a program the tests need; throws, saying how to install it, when it is missing. */
export function requireTool(command: string): string {
  const tool = TEST_TOOLS.find((t) => (t.command as readonly string[]).includes(command));
  if (!tool) throw new Error(`${command} is not among the test tools in scripts/test-deps.ts`);
  const path = findTool(tool);
  if (!path) throw new Error(`${command} is not installed: \`npm test\` installs it (scripts/test-deps.ts), or run \`apt-get install -y ${tool.pkg}\``);
  return path;
}

const ASKPASS = join(import.meta.dir, "askpass.sh");

/**
 * OpenSSH without a terminal and without sshpass: with SSH_ASKPASS_REQUIRE=force, ssh asks
 * the askpass program for the password, which prints it from the environment.
 */
export function sshPasswordEnv(password: string, base: Record<string, string | undefined> = process.env): Record<string, string | undefined> {
  return { ...base, SSH_ASKPASS: ASKPASS, SSH_ASKPASS_REQUIRE: "force", TEST_SSH_PASSWORD: password };
}

/**
 * Options for a password login that answers once: a refused password ends the client (exit
 * 255) instead of asking again, so a test sees exactly one attempt, as with a person who gives up.
 */
export const SSH_PASSWORD_OPTS = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "NumberOfPasswordPrompts=1"];
