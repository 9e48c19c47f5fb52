/**
 * The JSON shapes dockerd answers with for images, containers and execs, built from the fake
 * state. Field names and order follow Docker 26's API types, since clients and scanners decode
 * them into those structs and print what they find.
 */
import { humanDuration, imageDigest, imageId, imageLayers } from "./facts.ts";
import type { Container, DaemonState, Exec, Image } from "./state.ts";
import { commandLine } from "./shell.ts";

const BRIDGE = { gateway: "172.17.0.1", prefix: 16 };

/** Go's time.Time in RFC 3339 with nanoseconds, as dockerd prints Created and StartedAt. */
export function goTime(ms: number): string {
  return ms === 0 ? "0001-01-01T00:00:00Z" : new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
}

function ipOf(c: Container): string {
  const n = Number.parseInt(c.id.slice(0, 4), 16);
  return `172.17.${(n >> 8) % 250}.${(n % 250) + 2}`;
}

function macOf(c: Container): string {
  return `02:42:ac:11:${c.id.slice(4, 6)}:${c.id.slice(6, 8)}`;
}

function status(c: Container, now: number): string {
  if (c.status === "running") return `Up ${humanDuration(now - c.startedAt)}`;
  if (c.status === "exited") return `Exited (${c.exitCode}) ${humanDuration(now - c.finishedAt)} ago`;
  return "Created";
}

function networks(c: Container): Record<string, unknown> {
  if (c.networkMode === "host" || c.networkMode === "none") return { [c.networkMode]: { IPAMConfig: null, Links: null, Aliases: null, MacAddress: "", NetworkID: "", EndpointID: "", Gateway: "", IPAddress: "", IPPrefixLen: 0, IPv6Gateway: "", GlobalIPv6Address: "", GlobalIPv6PrefixLen: 0, DriverOpts: null, DNSNames: null } };
  const running = c.status === "running";
  return {
    bridge: {
      IPAMConfig: null,
      Links: null,
      Aliases: null,
      MacAddress: running ? macOf(c) : "",
      NetworkID: "3f1c4b5e8d2a6f7091b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819",
      EndpointID: running ? c.id.split("").reverse().join("") : "",
      Gateway: running ? BRIDGE.gateway : "",
      IPAddress: running ? ipOf(c) : "",
      IPPrefixLen: running ? BRIDGE.prefix : 0,
      IPv6Gateway: "",
      GlobalIPv6Address: "",
      GlobalIPv6PrefixLen: 0,
      DriverOpts: null,
      DNSNames: null,
    },
  };
}

function mountsOf(c: Container): Record<string, unknown>[] {
  return c.binds.map((b) => {
    const [source = "", destination = "", mode = ""] = b.split(":");
    return { Type: "bind", Source: source, Destination: destination, Mode: mode, RW: !mode.split(",").includes("ro"), Propagation: "rprivate" };
  });
}

function networkMode(c: Container): string {
  return c.networkMode === "" || c.networkMode === "default" ? "bridge" : c.networkMode;
}

export function containerSummary(c: Container, now: number): Record<string, unknown> {
  return {
    Id: c.id,
    Names: [`/${c.name}`],
    Image: c.imageName,
    ImageID: `sha256:${imageIdOf(c)}`,
    Command: commandLine([...c.entrypoint, ...c.cmd]),
    Created: Math.floor(c.created / 1000),
    Ports: [],
    Labels: {},
    State: c.status,
    Status: status(c, now),
    HostConfig: { NetworkMode: networkMode(c) },
    NetworkSettings: { Networks: networks(c) },
    Mounts: mountsOf(c),
  };
}

function imageIdOf(c: Container): string {
  return imageId(c.image);
}

export function containerInspect(c: Container, state: DaemonState): Record<string, unknown> {
  const running = c.status === "running";
  const [path = "", ...args] = [...c.entrypoint, ...c.cmd];
  const execIds = [...state.execs.values()].filter((e) => e.containerId === c.id).map((e) => e.id);
  return {
    Id: c.id,
    Created: goTime(c.created),
    Path: path,
    Args: args,
    State: {
      Status: c.status,
      Running: running,
      Paused: false,
      Restarting: false,
      OOMKilled: false,
      Dead: false,
      Pid: running ? 2000 + (Number.parseInt(c.id.slice(0, 4), 16) % 60000) : 0,
      ExitCode: c.exitCode,
      Error: "",
      StartedAt: goTime(c.startedAt),
      FinishedAt: goTime(c.finishedAt),
    },
    Image: `sha256:${imageIdOf(c)}`,
    ResolvConfPath: `${state.host.dockerRoot}/containers/${c.id}/resolv.conf`,
    HostnamePath: `${state.host.dockerRoot}/containers/${c.id}/hostname`,
    HostsPath: `${state.host.dockerRoot}/containers/${c.id}/hosts`,
    LogPath: c.startedAt ? `${state.host.dockerRoot}/containers/${c.id}/${c.id}-json.log` : "",
    Name: `/${c.name}`,
    RestartCount: 0,
    Driver: "overlay2",
    Platform: "linux",
    MountLabel: "",
    ProcessLabel: "",
    AppArmorProfile: c.privileged ? "unconfined" : "docker-default",
    ExecIDs: execIds.length > 0 ? execIds : null,
    HostConfig: {
      Binds: c.binds.length > 0 ? c.binds : null,
      NetworkMode: networkMode(c),
      RestartPolicy: { Name: "no", MaximumRetryCount: 0 },
      AutoRemove: c.autoRemove,
      CapAdd: c.capAdd.length > 0 ? c.capAdd : null,
      CapDrop: null,
      CgroupnsMode: "private",
      PidMode: c.pidMode,
      Privileged: c.privileged,
      ReadonlyRootfs: false,
      SecurityOpt: c.privileged ? ["label=disable"] : null,
      ShmSize: 67108864,
      Runtime: "runc",
      Isolation: "",
    },
    GraphDriver: {
      Data: { MergedDir: `${state.host.dockerRoot}/overlay2/${c.id.slice(0, 25)}/merged`, UpperDir: `${state.host.dockerRoot}/overlay2/${c.id.slice(0, 25)}/diff`, WorkDir: `${state.host.dockerRoot}/overlay2/${c.id.slice(0, 25)}/work` },
      Name: "overlay2",
    },
    Mounts: mountsOf(c),
    Config: {
      Hostname: c.id.slice(0, 12),
      Domainname: "",
      User: c.user,
      AttachStdin: false,
      AttachStdout: true,
      AttachStderr: true,
      Tty: c.tty,
      OpenStdin: c.openStdin,
      StdinOnce: false,
      Env: c.env.length > 0 ? c.env : ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      Cmd: c.cmd.length > 0 ? c.cmd : null,
      Image: c.imageName,
      Volumes: null,
      WorkingDir: c.workingDir,
      Entrypoint: c.entrypoint.length > 0 ? c.entrypoint : null,
      OnBuild: null,
      Labels: {},
    },
    NetworkSettings: {
      Bridge: "",
      SandboxID: running ? c.id.split("").reverse().join("").slice(0, 64) : "",
      SandboxKey: running ? `/var/run/docker/netns/${c.id.slice(8, 20)}` : "",
      Ports: {},
      Gateway: running && networkMode(c) === "bridge" ? BRIDGE.gateway : "",
      IPAddress: running && networkMode(c) === "bridge" ? ipOf(c) : "",
      IPPrefixLen: running && networkMode(c) === "bridge" ? BRIDGE.prefix : 0,
      MacAddress: running && networkMode(c) === "bridge" ? macOf(c) : "",
      Networks: networks(c),
    },
  };
}

export function imageSummary(i: Image): Record<string, unknown> {
  return {
    Containers: -1,
    Created: Math.floor(i.created / 1000),
    Id: `sha256:${i.id}`,
    Labels: null,
    ParentId: "",
    RepoDigests: [`${i.ref.repo}@sha256:${imageDigest(i.ref)}`],
    RepoTags: [`${i.ref.repo}:${i.ref.tag}`],
    SharedSize: -1,
    Size: i.size,
  };
}

export function imageInspect(i: Image, cmd: string[]): Record<string, unknown> {
  return {
    Id: `sha256:${i.id}`,
    RepoTags: [`${i.ref.repo}:${i.ref.tag}`],
    RepoDigests: [`${i.ref.repo}@sha256:${imageDigest(i.ref)}`],
    Parent: "",
    Comment: "",
    Created: goTime(i.created),
    DockerVersion: "",
    Author: "",
    Config: {
      Hostname: "",
      Domainname: "",
      User: "",
      AttachStdin: false,
      AttachStdout: false,
      AttachStderr: false,
      Tty: false,
      OpenStdin: false,
      StdinOnce: false,
      Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      Cmd: cmd,
      Image: "",
      Volumes: null,
      WorkingDir: "",
      Entrypoint: null,
      OnBuild: null,
      Labels: null,
    },
    Architecture: "amd64",
    Os: "linux",
    Size: i.size,
    GraphDriver: { Data: { MergedDir: "", UpperDir: "", WorkDir: "" }, Name: "overlay2" },
    RootFS: { Type: "layers", Layers: imageLayers(i.ref).map((l) => `sha256:${l}`) },
    Metadata: { LastTagTime: "0001-01-01T00:00:00Z" },
  };
}

export function execInspect(e: Exec, c: Container | undefined): Record<string, unknown> {
  const [entrypoint = "", ...args] = e.cmd;
  return {
    ID: e.id,
    Running: e.running,
    ExitCode: e.exitCode,
    ProcessConfig: { tty: e.tty, entrypoint, arguments: args, privileged: e.privileged, user: e.user },
    OpenStdin: e.attachStdin,
    OpenStderr: true,
    OpenStdout: true,
    CanRemove: false,
    ContainerID: e.containerId,
    DetachKeys: "",
    Pid: c && e.running ? 3000 + (Number.parseInt(e.id.slice(0, 4), 16) % 60000) : 0,
  };
}
