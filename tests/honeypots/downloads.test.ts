/**
 * The fake shell's download tools really fetch (docs/artifacts.md): curl over HTTP, busybox tftp
 * from a TFTP server and busybox ftpget from an FTP server, each started by the test. The bytes
 * land in the pot's outbox under their SHA-256 (mode 0600) with a sighting for the node, and the
 * event carries Cowrie's fields.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "../helpers/clients";
import { Relay, removeDir, run, startPot, type Pot } from "./harness";

const SSH_OPTS = [...SSH_PASSWORD_OPTS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password"];
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
/** 1300 bytes: three TFTP blocks, the last one short. */
const PAYLOAD = Buffer.from(Array.from({ length: 1300 }, (_, i) => (i * 17 + 3) % 256));
const SCRIPT = Buffer.from("#!/bin/sh\necho dropped\n");

let relay: Relay;
let pot: Pot<"cowrie">;
let web: ReturnType<typeof Bun.serve>;
let tftp: Bun.udp.Socket<"buffer">;
let ftp: Server;
let ftpPort: number;

/** A TFTP server for one file (RFC 1350, octet mode): DATA blocks from a port of its own, each after the previous ACK. */
async function tftpServer(): Promise<Bun.udp.Socket<"buffer">> {
  return Bun.udpSocket({
    socket: {
      async data(_s, buf, port, address) {
        if (buf.readUInt16BE(0) !== 1) return;
        const name = buf.subarray(2, buf.indexOf(0, 2)).toString();
        const transfer = await Bun.udpSocket({
          socket: {
            data(sock, ack) {
              const block = ack.readUInt16BE(2);
              if (block * 512 <= PAYLOAD.length) send(sock, block + 1);
              else sock.close();
            },
          },
        });
        const send = (sock: typeof transfer, block: number) =>
          sock.send(Buffer.concat([Buffer.from([0, 3, block >> 8, block & 0xff]), PAYLOAD.subarray((block - 1) * 512, block * 512)]), port, address);
        if (name === "m.arm") send(transfer, 1);
        else transfer.send(Buffer.concat([Buffer.from([0, 5, 0, 1]), Buffer.from("File not found\0")]), port, address);
      },
    },
  });
}

/** An anonymous FTP server for one file, passive mode. */
function ftpServer(): Promise<Server> {
  const server = createServer((ctrl) => {
    ctrl.write("220 (vsFTPd 3.0.3)\r\n");
    let buffer = "";
    ctrl.on("data", (chunk) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf("\r\n"); nl >= 0; nl = buffer.indexOf("\r\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const [cmd, arg] = [line.slice(0, 4).toUpperCase(), line.slice(5)];
        if (cmd === "USER") ctrl.write("331 Please specify the password.\r\n");
        else if (cmd === "PASS") ctrl.write("230 Login successful.\r\n");
        else if (cmd === "TYPE") ctrl.write("200 Switching to Binary mode.\r\n");
        else if (cmd === "PASV") {
          const data = createServer((d) => {
            d.end(SCRIPT);
            data.close();
          }).listen(0, "127.0.0.1", () => {
            const p = (data.address() as { port: number }).port;
            ctrl.write(`227 Entering Passive Mode (127,0,0,1,${p >> 8},${p & 0xff}).\r\n`);
          });
        } else if (cmd === "RETR") {
          if (arg !== "/pub/x.sh") ctrl.write("550 Failed to open file.\r\n");
          else {
            ctrl.write("150 Opening BINARY mode data connection.\r\n");
            setImmediate(() => ctrl.write("226 Transfer complete.\r\n"));
          }
        } else ctrl.write("502 Command not implemented.\r\n");
      }
    });
    ctrl.on("error", () => {});
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  web = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => (new URL(req.url).pathname === "/x.sh" ? new Response(SCRIPT) : new Response("no", { status: 404, statusText: "Not Found" })) });
  tftp = await tftpServer();
  ftp = await ftpServer();
  ftpPort = (ftp.address() as { port: number }).port;
  relay = Relay.start();
  pot = await startPot("cowrie", { ssh_port: "0", telnet_port: "0", hostname: "db-prod-2", download_private: "true" }, relay);
});

afterAll(async () => {
  await pot.stop();
  relay.stop();
  web.stop(true);
  tftp.close();
  ftp.close();
  removeDir(pot.dir);
});

const ssh = (command: string) => run([requireTool("ssh"), ...SSH_OPTS, "-p", String(pot.ports.ssh), "root@127.0.0.1", command], undefined, sshPasswordEnv("123456"));

/** The outbox holds the bytes under their hash, mode 0600, and a sighting naming the URL. */
function inOutbox(bytes: Buffer, url: string): void {
  const hash = sha(bytes);
  const outbox = join(pot.dir, "outbox");
  expect(sha(readFileSync(join(outbox, hash)))).toBe(hash);
  expect(statSync(join(outbox, hash)).mode & 0o777).toBe(0o600);
  const sightings = readdirSync(outbox)
    .filter((n) => n.startsWith(`${hash}.`) && n.endsWith(".json"))
    .map((n) => JSON.parse(readFileSync(join(outbox, n), "utf8")));
  expect(sightings.some((s) => s.kind === "artifact" && s.meta.url === url && s.meta.source === "cowrie.session.file_download")).toBe(true);
}

test("curl prints the body or saves it with -O, and fails on 404 with -f; piped into sh, the script runs in the fake shell", async () => {
  const url = `http://127.0.0.1:${web.port}/x.sh`;
  const r = await ssh(`cd /tmp; curl -s ${url}; curl -s -O ${url}; cat x.sh; curl -sf http://127.0.0.1:${web.port}/nope; echo $?; curl -s ${url} | sh`);
  expect(r.stdout).toBe(`${SCRIPT}${SCRIPT}22\ndropped\n`);
  const e = await relay.event("cowrie.session.file_download", { url, destfile: "/tmp/x.sh" });
  expect(e).toMatchObject({ shasum: sha(SCRIPT), outfile: `outbox/${sha(SCRIPT)}`, size: SCRIPT.length });
  expect(await relay.event("cowrie.session.file_download.failed", { url: `http://127.0.0.1:${web.port}/nope` })).toMatchObject({ reason: "404 Not Found" });
  inOutbox(SCRIPT, url);
});

test("busybox tftp -g fetches over TFTP; a missing file is the server's error", async () => {
  const r = await ssh(`cd /tmp; busybox tftp -g -r m.arm 127.0.0.1 ${tftp.port}; echo $?; ls m.arm; busybox tftp -g -r nope 127.0.0.1 ${tftp.port}; echo $?`);
  expect(r.stdout).toBe("0\nm.arm\n1\n");
  expect(r.stderr).toBe("tftp: server error: (1) File not found\n");
  const url = `tftp://127.0.0.1:${tftp.port}/m.arm`;
  expect(await relay.event("cowrie.session.file_download", { url })).toMatchObject({ shasum: sha(PAYLOAD), destfile: "/tmp/m.arm", size: PAYLOAD.length });
  inOutbox(PAYLOAD, url);
});

test("busybox ftpget fetches over anonymous FTP", async () => {
  const r = await ssh(`busybox ftpget -P ${ftpPort} 127.0.0.1 /tmp/f.sh /pub/x.sh; echo $?; cat /tmp/f.sh`);
  expect(r.stdout).toBe(`0\n${SCRIPT}`);
  const url = `ftp://127.0.0.1:${ftpPort}/pub/x.sh`;
  expect(await relay.event("cowrie.session.file_download", { url })).toMatchObject({ shasum: sha(SCRIPT), destfile: "/tmp/f.sh" });
});

test("a full outbox (outbox_max_bytes) makes downloads fail as on a full disk", async () => {
  const small = await startPot("cowrie", { ssh_port: "0", telnet_port: "0", hostname: "db-prod-2", download_private: "true", outbox_max_bytes: "100" }, relay);
  try {
    const url = `http://127.0.0.1:${web.port}/x.sh`;
    const argv = [requireTool("ssh"), ...SSH_OPTS, "-p", String(small.ports.ssh), "root@127.0.0.1"];
    // The first file fits; with it and its sighting the outbox is past 100 bytes.
    expect((await run([...argv, `wget -O /tmp/a.sh ${url}`], undefined, sshPasswordEnv("123456"))).code).toBe(0);
    const r = await run([...argv, `cd /tmp; wget -O b.sh ${url}; echo $?; curl -s -o c.sh ${url}; echo $?`], undefined, sshPasswordEnv("123456"));
    expect(r.stdout).toBe("3\n23\n");
    expect(r.stderr).toContain("Cannot write to ‘b.sh’ (No space left on device).");
    const failed = await relay.event("cowrie.session.file_download.failed", { url, dst_port: small.ports.ssh });
    expect(failed.reason).toBe("the outbox holds 100 bytes or more");
  } finally {
    await small.stop();
    removeDir(small.dir);
  }
});
