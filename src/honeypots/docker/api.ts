/**
 * The Engine API's answers, with no sockets: a routed request and its body in, a reply and the
 * events it is worth out. Replies that hold a connection open (wait, attach, exec start) are
 * described here and carried out by the server, which owns the connection.
 */
import { compareApi, daemonHeaders, defaultCmd, type HostFacts, infoJson, parseRef, pullProgress, type Release, versionJson } from "./facts.ts";
import { frame } from "./http.ts";
import type { Route, Target } from "./routes.ts";
import { boolParam } from "./routes.ts";
import { commandLine } from "./shell.ts";
import type { Container, DaemonState, Exec, WaitCondition } from "./state.ts";
import { containerInspect, containerSummary, execInspect, imageInspect, imageSummary } from "./views.ts";

export type Reply =
  | { type: "json"; status: number; body: unknown }
  | { type: "empty"; status: number; headers?: Record<string, string> }
  | { type: "ping"; head: boolean }
  | { type: "stream"; contentType: string; parts: Buffer[] }
  | { type: "wait"; ref: string; condition: WaitCondition }
  | { type: "attach"; container: Container; contentType: string; multiplexed: boolean; stdin: boolean; logs: Buffer[] }
  | { type: "exec"; exec: Exec; contentType: string; multiplexed: boolean }
  | { type: "archive"; container: Container };

export interface PotEventOut {
  event: string;
  fields: Record<string, unknown>;
}

export interface Outcome {
  reply: Reply;
  events: PotEventOut[];
}

export interface ApiRequest {
  method: string;
  route: Route;
  target: Target;
  contentType: string;
  body: Buffer;
}

/** Bounds on what one captured field keeps: the body is bounded already, this keeps events readable. */
const MAX_STRING = 8192;
const MAX_ITEMS = 256;

export const RAW_STREAM = "application/vnd.docker.raw-stream";
export const MULTIPLEXED_STREAM = "application/vnd.docker.multiplexed-stream";

function str(v: unknown): string {
  return typeof v === "string" ? v.slice(0, MAX_STRING) : "";
}

/** Docker's StrSlice: a JSON string or an array of strings. */
function strs(v: unknown): string[] {
  if (typeof v === "string") return [v.slice(0, MAX_STRING)];
  if (!Array.isArray(v)) return [];
  return v.filter((x): x is string => typeof x === "string").slice(0, MAX_ITEMS).map((x) => x.slice(0, MAX_STRING));
}

function obj(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Without a TTY the stream is always multiplexed (stdcopy frames); API 1.42 is where dockerd
 * started to say so in its Content-Type, older clients are told "raw" for both.
 */
function streamType(tty: boolean, version: string): string {
  return !tty && compareApi(version, "1.42") >= 0 ? MULTIPLEXED_STREAM : RAW_STREAM;
}

const json = (status: number, body: unknown): Reply => ({ type: "json", status, body });
const error = (status: number, message: string): Outcome => ({ reply: json(status, { message }), events: [] });
const only = (reply: Reply): Outcome => ({ reply, events: [] });

export class DockerApi {
  readonly headers: Record<string, string>;

  constructor(
    readonly release: Release,
    readonly state: DaemonState,
    private readonly host: HostFacts,
    private readonly port: number,
  ) {
    this.headers = daemonHeaders(release);
  }

  handle(req: ApiRequest): Outcome {
    const { route, target } = req;
    const version = target.version || this.release.api;
    const q = target.query;
    const [param = ""] = route.params;
    switch (route.name) {
      case "options":
        return only({ type: "empty", status: 200 });
      case "ping":
        return only({ type: "ping", head: req.method === "HEAD" });
      case "version":
        return only(json(200, versionJson(this.release)));
      case "info":
        return only(json(200, infoJson(this.release, this.host, this.state.counts(), this.port)));
      case "images.list":
        return only(json(200, [...this.state.images.values()].reverse().map(imageSummary)));
      case "images.create":
        return this.pull(q);
      case "images.inspect": {
        const ref = parseRef(param);
        const image = ref && this.state.findImage(ref);
        if (!image) return error(404, `No such image: ${param}`);
        return only(json(200, imageInspect(image, defaultCmd(image.ref))));
      }
      case "images.delete": {
        const ref = parseRef(param);
        const image = ref && this.state.findImage(ref);
        if (!ref || !image) return error(404, `No such image: ${param}`);
        this.state.images.delete(this.state.imageKey(ref));
        return only(json(200, [{ Untagged: `${ref.repo}:${ref.tag}` }, { Deleted: `sha256:${image.id}` }]));
      }
      case "containers.create":
        return this.create(req);
      case "containers.list": {
        const all = boolParam(q, "all");
        const limit = Number(q.get("limit") ?? "-1");
        const now = Date.now();
        let list = [...this.state.containers.values()].reverse().filter((c) => all || c.status === "running");
        if (limit > 0) list = list.slice(0, limit);
        return only(json(200, list.map((c) => containerSummary(c, now))));
      }
      case "exec.inspect": {
        const e = this.state.execs.get(param);
        if (!e) return error(404, `No such exec instance: ${param}`);
        return only(json(200, execInspect(e, this.state.containers.get(e.containerId))));
      }
      case "exec.start":
        return this.execStart(req, param);
      case "exec.resize":
        return this.state.execs.has(param) ? only({ type: "empty", status: 200 }) : error(404, `No such exec instance: ${param}`);
      case "containers.wait": {
        const condition = q.get("condition") || "not-running";
        if (condition !== "not-running" && condition !== "next-exit" && condition !== "removed") return error(400, `invalid condition: "${condition}"`);
        return only({ type: "wait", ref: param, condition });
      }
    }
    // Every other route names a container.
    const c = this.state.find(param);
    if (!c) return error(404, `No such container: ${param}`);
    switch (route.name) {
      case "containers.inspect":
        return only(json(200, containerInspect(c, this.state)));
      case "containers.start": {
        if (req.body.length > 7) return error(400, "starting container with non-empty request body was deprecated since API v1.22 and removed in v1.24");
        const started = this.state.start(c);
        if (!started) return only({ type: "empty", status: 304 });
        return { reply: { type: "empty", status: 204 }, events: [{ event: "container.start", fields: { container_id: c.id, name: c.name, image: c.imageName, command: commandLine([...c.entrypoint, ...c.cmd]) } }] };
      }
      case "containers.stop":
        // SIGTERM, which the emulated processes die of (143), as `sleep` does.
        return only({ type: "empty", status: this.state.stop(c, 143) ? 204 : 304 });
      case "containers.kill": {
        if (c.status !== "running") return error(409, `Cannot kill container: ${param}: container ${c.id} is not running`);
        const signal = signalNumber(q.get("signal") || "KILL");
        if (signal === null) return error(400, `Invalid signal: ${(q.get("signal") ?? "").slice(0, 64)}`);
        // The CLI forwards every signal it gets (docker run's sig-proxy): only the deadly ones end the process.
        if (!HARMLESS_SIGNALS.has(signal)) this.state.stop(c, 128 + signal);
        return only({ type: "empty", status: 204 });
      }
      case "containers.restart":
        this.state.stop(c);
        this.state.start(c);
        return only({ type: "empty", status: 204 });
      case "containers.resize":
        return only({ type: "empty", status: 200 });
      case "containers.attach": {
        const logs = boolParam(q, "logs") ? this.logFrames(c, boolParam(q, "stdout"), boolParam(q, "stderr")) : [];
        return only({ type: "attach", container: c, contentType: streamType(c.tty, version), multiplexed: !c.tty, stdin: boolParam(q, "stdin"), logs });
      }
      case "containers.logs": {
        const stdout = boolParam(q, "stdout");
        const stderr = boolParam(q, "stderr");
        if (!stdout && !stderr) return error(400, "Bad parameters: you must choose at least one stream");
        return only({ type: "stream", contentType: streamType(c.tty, version), parts: this.logFrames(c, stdout, stderr) });
      }
      case "containers.top": {
        if (c.status !== "running") return error(409, `container ${c.id} is not running`);
        const pid = (containerInspect(c, this.state).State as { Pid: number }).Pid;
        const started = new Date(c.startedAt).toISOString().slice(11, 16);
        const cmd = commandLine([...c.entrypoint, ...c.cmd]).slice(0, 4096);
        return only(json(200, { Titles: ["UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"], Processes: [["root", String(pid), String(pid - 21), "0", started, "?", "00:00:00", cmd]] }));
      }
      case "containers.delete":
        if (c.status === "running" && !boolParam(q, "force")) {
          return error(409, `cannot remove container "/${c.name}": container is running: stop the container before removing or force remove`);
        }
        this.state.remove(c);
        return only({ type: "empty", status: 204 });
      case "exec.create":
        return this.execCreate(req, c);
      case "archive.stat": {
        const path = q.get("path") ?? "";
        if (path === "") return error(400, "Bad parameters: path cannot be empty");
        const stat = { name: path.split("/").filter(Boolean).pop() ?? "/", size: 4096, mode: 2147484141, mtime: new Date(c.created).toISOString(), linkTarget: "" };
        return only({ type: "empty", status: 200, headers: { "X-Docker-Container-Path-Stat": Buffer.from(JSON.stringify(stat)).toString("base64") } });
      }
      case "archive.put":
        return only({ type: "archive", container: c });
    }
    return error(404, "page not found");
  }

  /** Frames of a container's recorded output, as logs and attach?logs=1 replay it. */
  private logFrames(c: Container, stdout: boolean, stderr: boolean): Buffer[] {
    const multiplexed = !c.tty;
    return c.log
      .filter((l) => (l.stream === 1 ? stdout : stderr))
      .map((l) => (multiplexed ? frame(l.stream, l.text) : Buffer.from(l.text)));
  }

  private pull(q: URLSearchParams): Outcome {
    const from = q.get("fromImage") ?? "";
    if (from === "") return error(400, "fromImage or fromSrc must be given");
    const ref = parseRef(from, q.get("tag") ?? "");
    if (!ref) return error(400, "invalid reference format");
    const present = this.state.pull(ref);
    const parts = pullProgress(ref, present).map((line) => Buffer.from(`${goJson(line)}\r\n`));
    return {
      reply: { type: "stream", contentType: "application/json", parts },
      events: [{ event: "image.pull", fields: { image: ref.repo, tag: ref.tag, from_image: from.slice(0, MAX_STRING), present } }],
    };
  }

  private parseBody(req: ApiRequest): Record<string, unknown> | Outcome {
    const type = req.contentType.split(";")[0]!.trim().toLowerCase();
    if (req.body.length > 0 && type !== "" && type !== "application/json") {
      return error(400, `unsupported Content-Type header (${req.contentType.slice(0, 200)}): must be 'application/json'`);
    }
    if (req.body.length === 0) return error(400, "invalid JSON: got EOF while reading request body");
    try {
      const parsed = JSON.parse(req.body.toString("utf8"));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return error(400, "json: cannot unmarshal value into Go value of type container.Config");
      return parsed as Record<string, unknown>;
    } catch {
      return error(400, "invalid character looking for beginning of value");
    }
  }

  private create(req: ApiRequest): Outcome {
    const body = this.parseBody(req);
    if ("reply" in body) return body as Outcome;
    const host = obj(body.HostConfig);
    const name = (req.target.query.get("name") ?? "").replace(/^\//, "");
    if (name !== "" && !/^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/.test(name)) {
      return error(400, `Invalid container name (${name.slice(0, 200)}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    }
    const imageName = str(body.Image);
    const spec = {
      imageName,
      cmd: strs(body.Cmd),
      entrypoint: strs(body.Entrypoint),
      env: strs(body.Env),
      binds: strs(host.Binds),
      mounts: (Array.isArray(host.Mounts) ? host.Mounts : []).slice(0, MAX_ITEMS).map((m) => {
        const o = obj(m);
        return `${str(o.Type) || "volume"}:${str(o.Source)}:${str(o.Target)}${o.ReadOnly === true ? ":ro" : ""}`;
      }),
      privileged: host.Privileged === true,
      networkMode: str(host.NetworkMode),
      pidMode: str(host.PidMode),
      capAdd: strs(host.CapAdd),
      user: str(body.User),
      workingDir: str(body.WorkingDir),
      tty: body.Tty === true,
      openStdin: body.OpenStdin === true,
      autoRemove: host.AutoRemove === true,
    };
    const fields = {
      name,
      image: imageName,
      cmd: spec.cmd,
      entrypoint: spec.entrypoint,
      command: commandLine([...spec.entrypoint, ...spec.cmd]),
      env: spec.env,
      binds: spec.binds,
      mounts: spec.mounts,
      privileged: spec.privileged,
      network_mode: spec.networkMode,
      pid_mode: spec.pidMode,
      cap_add: spec.capAdd,
      user: spec.user,
      working_dir: spec.workingDir,
      tty: spec.tty,
      auto_remove: spec.autoRemove,
    };
    const ref = parseRef(imageName);
    if (!ref) return { reply: json(400, { message: "invalid reference format" }), events: [{ event: "container.create", fields: { ...fields, container_id: null, result: "invalid_reference" } }] };
    if (!this.state.findImage(ref)) {
      return { reply: json(404, { message: `No such image: ${ref.repo}:${ref.tag}` }), events: [{ event: "container.create", fields: { ...fields, container_id: null, result: "no_such_image" } }] };
    }
    const taken = name === "" ? undefined : this.state.nameTaken(name);
    if (taken) {
      const message = `Conflict. The container name "/${name}" is already in use by container "${taken.id}". You have to remove (or rename) that container to be able to reuse that name.`;
      return { reply: json(409, { message }), events: [{ event: "container.create", fields: { ...fields, container_id: null, result: "name_conflict" } }] };
    }
    const c = this.state.create({ ...spec, image: ref, name });
    const command = commandLine([...c.entrypoint, ...c.cmd]);
    return {
      reply: json(201, { Id: c.id, Warnings: [] }),
      events: [
        { event: "container.create", fields: { ...fields, name: c.name, cmd: c.cmd, command, container_id: c.id, result: "created" } },
        { event: "command.input", fields: { input: command, container_id: c.id, source: "container.create" } },
      ],
    };
  }

  private execCreate(req: ApiRequest, c: Container): Outcome {
    const body = this.parseBody(req);
    if ("reply" in body) return body as Outcome;
    const cmd = strs(body.Cmd);
    if (cmd.length === 0) return error(400, "No exec command specified");
    if (c.status !== "running") return error(409, `container ${c.id} is not running`);
    const e = this.state.createExec(c, { cmd, tty: body.Tty === true, privileged: body.Privileged === true, user: str(body.User), attachStdin: body.AttachStdin === true });
    const command = commandLine(cmd);
    return {
      reply: json(201, { Id: e.id }),
      events: [
        { event: "exec.create", fields: { exec_id: e.id, container_id: c.id, cmd, command, env: strs(body.Env), privileged: e.privileged, user: e.user, tty: e.tty } },
        { event: "command.input", fields: { input: command, container_id: c.id, exec_id: e.id, source: "exec.create" } },
      ],
    };
  }

  private execStart(req: ApiRequest, id: string): Outcome {
    const e = this.state.execs.get(id);
    if (!e) return error(404, `No such exec instance: ${id}`);
    const c = this.state.containers.get(e.containerId);
    if (c?.status !== "running") return error(409, `container ${e.containerId} is not running`);
    let detach = false;
    let tty = e.tty;
    if (req.body.length > 0) {
      try {
        const body = obj(JSON.parse(req.body.toString("utf8")));
        detach = body.Detach === true;
        if (typeof body.Tty === "boolean") tty = body.Tty;
      } catch {
        return error(400, "invalid character looking for beginning of value");
      }
    }
    if (e.exitCode !== null || e.running) return error(409, `exec ${e.id} has already started`);
    if (detach) {
      this.state.runExec(e);
      return only({ type: "empty", status: 200 });
    }
    return only({ type: "exec", exec: e, contentType: streamType(tty, req.target.version || this.release.api), multiplexed: !tty });
  }
}

const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, ILL: 4, TRAP: 5, ABRT: 6, BUS: 7, FPE: 8, KILL: 9, USR1: 10, SEGV: 11, USR2: 12, PIPE: 13, ALRM: 14, TERM: 15, STKFLT: 16, CHLD: 17, CONT: 18, STOP: 19, TSTP: 20, TTIN: 21, TTOU: 22, URG: 23, XCPU: 24, XFSZ: 25, VTALRM: 26, PROF: 27, WINCH: 28, IO: 29, PWR: 30, SYS: 31 };
/** Signals whose default action is not to end the process (CHLD, CONT, the stops, URG, WINCH). */
const HARMLESS_SIGNALS = new Set([17, 18, 19, 20, 21, 22, 23, 28]);

/** "SIGTERM", "TERM" or "15", as dockerd's signal.ParseSignal takes them. */
function signalNumber(name: string): number | null {
  if (/^\d{1,2}$/.test(name)) return Number(name) >= 1 && Number(name) <= 64 ? Number(name) : null;
  const key = name.toUpperCase().replace(/^SIG/, "");
  return Object.hasOwn(SIGNALS, key) ? SIGNALS[key]! : null;
}

/** JSON as Go's encoder writes it: <, > and & escaped, so HTML never leaks through. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
}

/** The first file's name in a tar stream's first header (ustar: name and prefix fields), if any. */
export function tarName(head: Buffer): string | null {
  if (head.length < 512 || head.subarray(257, 262).toString("latin1") !== "ustar") return null;
  const field = (start: number, len: number) => {
    const raw = head.subarray(start, start + len);
    const end = raw.indexOf(0);
    return raw.subarray(0, end < 0 ? len : end).toString("utf8");
  };
  const name = field(0, 100);
  const prefix = field(345, 155);
  const full = prefix ? `${prefix}/${name}` : name;
  return full === "" ? null : full;
}
