/**
 * Artifacts end to end (docs/artifacts.md): real OpenSSH into the built-in cowrie run by a real
 * node agent with a real Core. wget fetches from a web server the test starts; scp and sftp
 * upload; every file becomes an artifact in REST, downloadable by an operator only, as a zip
 * encrypted with `infected` that Debian's unzip opens to the exact bytes. A transfer cut by a
 * Core restart resumes where it stopped.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { startNode, type NodeHandle } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { sha256 as hashToken } from "../../src/core/auth/tokens";
import { freePort, getJson, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { keptDatabase, type KeptDatabase } from "../helpers/kept-db";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "../helpers/clients";

const SSH_OPTS = [...SSH_PASSWORD_OPTS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password"];
const READER = "reader-token-0123456789";
const OPERATOR = "operator-token-0123456789";
const TOKENS = [
  { name: "reader", role: "read" as const, sha256: hashToken(READER) },
  { name: "op", role: "operator" as const, sha256: hashToken(OPERATOR) },
];
const LIMIT = 1_000_000;

/** An x86-64 ELF header and some code-like bytes: file-type must call it application/x-elf. */
const ELF = Buffer.concat([Buffer.from("7f454c4602010100000000000000000002003e00010000007810400000000000", "hex"), Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256))]);
const BIG = Buffer.from(Array.from({ length: LIMIT + 200_000 }, (_, i) => (i * 31 + 7) % 251));
const RESUMED = Buffer.from(Array.from({ length: 900_000 }, (_, i) => (i * 13 + 1) % 253));
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

const dir = tempDir();
const logLines: string[] = [];
const logger = pino({ level: "info" }, new Writable({ write: (c, _e, cb) => (logLines.push(c.toString()), cb()) }));
let kept: KeptDatabase;
let core: TestCore;
let node: NodeHandle;
let web: ReturnType<typeof Bun.serve>;
let sshPort: number;
let httpPort: number;
const coreConfig = () => ({ ...kept.config, tokens: TOKENS });
const auth = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

async function run(argv: string[], env?: Record<string, string | undefined>, stdin?: string) {
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", stdin: stdin === undefined ? "ignore" : new Blob([stdin]), env });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, out, err };
}

const ssh = (command: string) => run([requireTool("ssh"), ...SSH_OPTS, "-p", String(sshPort), "root@127.0.0.1", command], sshPasswordEnv("123456"));

async function artifact(hash: string, stored = true): Promise<any> {
  return until(
    async () => {
      const r = await getJson(`${core.api}/api/v1/artifacts/${hash}`, auth(READER));
      return r.status === 200 && r.body.stored === stored && r.body;
    },
    `artifact ${hash}`,
    3000,
  );
}

async function event(type: string, match: (data: any) => boolean): Promise<any> {
  return until(
    async () => {
      const r = await getJson(`${core.api}/api/v1/events?event_type=${type}&limit=500`, auth(READER));
      return (r.body.events as any[]).find((e) => match(e.data));
    },
    `a ${type} event`,
    3000,
  );
}

beforeAll(async () => {
  web = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const path = new URL(req.url).pathname;
      const body = path === "/bins/x86" ? ELF : path === "/big.bin" ? BIG : path === "/resume.bin" ? RESUMED : null;
      return body ? new Response(body, { headers: { "content-type": "application/octet-stream" } }) : new Response("not found", { status: 404 });
    },
  });
  kept = await keptDatabase(dir.path);
  core = await startTestCore(coreConfig(), logger);
  node = await startNode(
    {
      core: `127.0.0.1:${core.ports.node}`,
      events: `127.0.0.1:${core.ports.event}`,
      data: join(dir.path, "node"),
      name: "artifacts",
      relay_port: 0,
      log_level: "silent",
      heartbeat_ms: 200,
      reconnect_min_ms: 10,
      reconnect_max_ms: 100,
      file_scan_ms: 50,
      // Slow enough that a Core restart lands inside the 900 KB transfer (under 2 s), even on a loaded machine.
      file_rate_bytes: 512 * 1024,
    },
    silentLogger(),
  );
  await node.registered();
  sshPort = freePort();
  const config = { ssh_port: String(sshPort), telnet_port: String(freePort()), hostname: "db-prod-2", download_private: "true", download_max_bytes: String(LIMIT) };
  const sent = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${OPERATOR}` },
    body: JSON.stringify({ InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config, auto_start: true } }),
  });
  expect(sent.status).toBe(202);
  httpPort = freePort();
  const web01 = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${OPERATOR}` },
    body: JSON.stringify({ InstallPot: { pot_id: "web-01", honeypot_type: "honnypotter", config: { http_port: String(httpPort) }, auto_start: true } }),
  });
  expect(web01.status).toBe(202);
  await until(async () => {
    const pots = (await getJson(`${core.api}/api/v1/honeypots`, auth(READER))).body.honeypots;
    return pots.length === 2 && pots.every((p: any) => p.status === "Running");
  }, "cowrie and honnypotter running", 3000);
});

afterAll(async () => {
  await node?.stop();
  await core?.stop();
  await kept?.[Symbol.asyncDispose]();
  web?.stop(true);
  dir[Symbol.dispose]();
});

describe("artifacts", () => {
  test("wget in an SSH session: the artifact has its hash, size, type, URL and session; operators download it as a zip encrypted with `infected`", async () => {
    const url = `http://127.0.0.1:${web.port}/bins/x86`;
    const r = await ssh(`cd /tmp; wget ${url}; ls x86`);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`Connecting to 127.0.0.1:${web.port}... connected.\nHTTP request sent, awaiting response... 200 OK\nLength: ${ELF.length} (${(ELF.length / 1024).toFixed(1)}K) [application/octet-stream]\nSaving to: ‘x86’`);
    expect(r.err).toContain(`- ‘x86’ saved [${ELF.length}/${ELF.length}]`);
    expect(r.out).toBe("x86\n");

    const hash = sha(ELF);
    const download = await event("cowrie.session.file_download", (d) => d.url === url);
    expect(download.data).toMatchObject({ url, shasum: hash, outfile: `outbox/${hash}`, destfile: "/tmp/x86", size: ELF.length, message: `Downloaded URL (${url}) with SHA-256 ${hash} to outbox/${hash}` });
    await artifact(hash);
    // The sighting names the session as Core stored it (once its events are in) and its address.
    const a = await until(async () => {
      const r = (await getJson(`${core.api}/api/v1/artifacts/${hash}`, auth(READER))).body;
      return r.sightings[0]?.session_id !== null && r;
    }, "the artifact's session in Core", 3000);
    const [session] = (await getJson(`${core.api}/api/v1/sessions?session=${download.data.session}`, auth(READER))).body.sessions;
    expect(a).toMatchObject({ sha256: hash, size: ELF.length, mime: "application/x-elf", ext: "elf", stored: true, urls: [url], sessions: [download.data.session], sources: ["127.0.0.1"], filenames: ["x86"] });
    expect(a.sightings).toEqual([
      {
        node_id: node.nodeId,
        pot_id: "ssh-01",
        source: "cowrie.session.file_download",
        session: download.data.session,
        session_id: session.id,
        src_ip: "127.0.0.1",
        url,
        filename: "x86",
        truncated: false,
        seen_at: expect.any(String),
      },
    ]);
    expect(session).toMatchObject({ session: download.data.session, pot_id: "ssh-01", files: 1 });
    const listed = (await getJson(`${core.api}/api/v1/artifacts?session=${download.data.session}`, auth(READER))).body;
    expect(listed.artifacts.map((x: any) => x.sha256)).toEqual([hash]);

    // A reader may list but not download; an operator gets a zip, never the bare bytes.
    const refused = await getJson(`${core.api}/api/v1/artifacts/${hash}/download`, auth(READER));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("forbidden");
    const res = await fetch(`${core.api}/api/v1/artifacts/${hash}/download`, auth(OPERATOR));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    const zip = Buffer.from(await res.arrayBuffer());
    expect(zip.includes(ELF.subarray(0, 64))).toBe(false);
    const zipPath = join(dir.path, "x86.zip");
    writeFileSync(zipPath, zip);
    expect((await run([requireTool("unzip"), "-P", "wrong", "-p", zipPath])).code).not.toBe(0);
    const unzipped = Bun.spawnSync([requireTool("unzip"), "-P", "infected", "-p", zipPath]);
    expect(unzipped.exitCode).toBe(0);
    expect(sha(unzipped.stdout)).toBe(hash);
    expect(Buffer.compare(Buffer.from(unzipped.stdout), ELF)).toBe(0);

    // AES-256 on request: 7-Zip opens it with the same password.
    const aes = await fetch(`${core.api}/api/v1/artifacts/${hash}/download?encryption=aes`, auth(OPERATOR));
    expect(aes.status).toBe(200);
    const aesPath = join(dir.path, "x86-aes.zip");
    writeFileSync(aesPath, Buffer.from(await aes.arrayBuffer()));
    const listing = Bun.spawnSync([requireTool("7z"), "l", "-slt", aesPath]).stdout.toString();
    expect(listing).toContain("Method = AES-256");
    const extracted = Bun.spawnSync([requireTool("7z"), "e", "-so", "-pinfected", aesPath]);
    expect(extracted.exitCode).toBe(0);
    expect(sha(extracted.stdout)).toBe(hash);
  });

  test("a download larger than download_max_bytes stops at the limit and its event says so", async () => {
    const url = `http://127.0.0.1:${web.port}/big.bin`;
    const r = await ssh(`wget -O /tmp/big.bin ${url}`);
    expect(r.code).toBe(4);
    expect(r.err).toContain(`Read error at byte ${LIMIT}/${BIG.length} (Connection reset by peer). Giving up.`);
    const head = BIG.subarray(0, LIMIT);
    const e = await event("cowrie.session.file_download", (d) => d.url === url);
    expect(e.data).toMatchObject({ url, shasum: sha(head), size: LIMIT, truncated: true, limit: LIMIT, destfile: "/tmp/big.bin" });
    expect(e.data.message).toEndWith(`(stopped at the size limit of ${LIMIT} bytes)`);
    const a = await artifact(sha(head));
    expect(a).toMatchObject({ size: LIMIT, urls: [url] });
    expect(a.sightings[0].truncated).toBe(true);
  });

  test("scp (SFTP and the legacy protocol) and sftp uploads are captured as artifacts", async () => {
    const files = ["scp over sftp\n", "scp -O legacy\n", "sftp put\n"].map((text, i) => {
      const path = join(dir.path, `up${i}.sh`);
      writeFileSync(path, `#!/bin/sh\n# ${text}`);
      return { path, bytes: Buffer.from(`#!/bin/sh\n# ${text}`) };
    });
    const target = (p: string) => `root@127.0.0.1:${p}`;
    const env = sshPasswordEnv("123456");
    const scp = requireTool("scp");
    expect((await run([scp, ...SSH_OPTS, "-P", String(sshPort), files[0]!.path, target("/tmp/up0.sh")], env)).code).toBe(0);
    expect((await run([scp, "-O", ...SSH_OPTS, "-P", String(sshPort), files[1]!.path, target("/tmp/")], env)).code).toBe(0);
    // sftp -b turns BatchMode on, which forbids passwords; the first value given wins in ssh.
    const batch = await run([requireTool("sftp"), "-o", "BatchMode=no", ...SSH_OPTS, "-P", String(sshPort), "-b", "-", "root@127.0.0.1"], env, `cd /tmp\nput ${files[2]!.path} up2.sh\nls\n`);
    expect(batch.code).toBe(0);
    expect(batch.out).toContain("up2.sh");

    const paths = ["/tmp/up0.sh", "/tmp/up1.sh", "/tmp/up2.sh"];
    for (const [i, f] of files.entries()) {
      const hash = sha(f.bytes);
      const e = await event("cowrie.session.file_upload", (d) => d.shasum === hash);
      expect(e.data).toMatchObject({ filename: `up${i}.sh`, url: paths[i], shasum: hash, outfile: `outbox/${hash}`, size: f.bytes.length });
      const a = await artifact(hash);
      expect(a).toMatchObject({ size: f.bytes.length, mime: "text/x-shellscript", urls: [paths[i]], filenames: [`up${i}.sh`], sessions: [e.data.session] });
      expect(a.sightings[0].source).toBe("cowrie.session.file_upload");
    }
  });

  test("a file POSTed to honnypotter (multipart) is captured as an artifact", async () => {
    const shell = Buffer.from("<?php system($_GET['c']); ?>\n");
    const path = join(dir.path, "wso.php");
    writeFileSync(path, shell);
    const r = await run([requireTool("curl"), "-s", "-o", "/dev/null", "-w", "%{http_code}", "-F", `async-upload=@${path}`, "-F", "name=wso.php", `http://127.0.0.1:${httpPort}/wp-admin/async-upload.php`]);
    expect(r.out).toBe("404");
    const hash = sha(shell);
    const e = await event("honnypotter.upload", (d) => d.shasum === hash);
    expect(e.data).toMatchObject({ filename: "wso.php", field: "async-upload", size: shell.length, shasum: hash, request_uri: "/wp-admin/async-upload.php", outfile: `outbox/${hash}` });
    expect(e.src_ip).toBe("127.0.0.1");
    const a = await artifact(hash);
    expect(a).toMatchObject({ size: shell.length, mime: "text/plain", urls: ["/wp-admin/async-upload.php"], filenames: ["wso.php"], sessions: [], sources: [] });
    expect(a.sightings).toEqual([
      { node_id: node.nodeId, pot_id: "web-01", source: "honnypotter.upload", session: null, session_id: null, src_ip: null, url: "/wp-admin/async-upload.php", filename: "wso.php", truncated: false, seen_at: expect.any(String) },
    ]);
  });

  test("a transfer cut by a Core restart resumes from Core's offset and completes", async () => {
    const url = `http://127.0.0.1:${web.port}/resume.bin`;
    const hash = sha(RESUMED);
    const partialDir = join(dir.path, "artifacts", "partial");
    expect((await ssh(`wget -q ${url}`)).code).toBe(0);
    // Core holds part of the file: stop it there.
    const partial = await until(
      () => existsSync(partialDir) && readdirSync(partialDir).find((n) => n.startsWith(hash) && statSync(join(partialDir, n)).size > 0),
      "the partial file",
      3000,
    );
    const ports = core.ports;
    await core.stop();
    const cut = statSync(join(partialDir, partial as string)).size;
    expect(cut).toBeGreaterThan(0);
    expect(cut).toBeLessThan(RESUMED.length);

    core = await startTestCore({ ...coreConfig(), node_port: ports.node, event_port: ports.event, api_port: ports.api, ws_port: ports.ws }, logger);
    const a = await artifact(hash);
    expect(a).toMatchObject({ sha256: hash, size: RESUMED.length, urls: [url] });
    const resumed = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "resuming a file transfer" && l.sha256 === hash);
    expect(resumed.offset).toBeGreaterThanOrEqual(cut);
    const res = await fetch(`${core.api}/api/v1/artifacts/${hash}/download`, auth(OPERATOR));
    const zipPath = join(dir.path, "resume.zip");
    writeFileSync(zipPath, Buffer.from(await res.arrayBuffer()));
    const unzipped = Bun.spawnSync([requireTool("unzip"), "-P", "infected", "-p", zipPath]);
    expect(sha(unzipped.stdout)).toBe(hash);
    expect(readdirSync(partialDir)).toEqual([]);
  });
});
