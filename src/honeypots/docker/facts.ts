/**
 * What the fake daemon says about itself: an Ubuntu 22.04 host running Docker Engine - Community
 * from Docker's apt repository, the most common exposed-2375 setup. Release details (API version,
 * commit, Go) come from the release the operator names, so `docker version` stays consistent.
 */
import { createHash } from "node:crypto";

export interface Release {
  version: string;
  api: string;
  commit: string;
  go: string;
  built: string;
  containerd: [string, string];
  runc: [string, string];
}

/** One release per major the honeypot may claim; an unknown patch level borrows its major's details. */
const RELEASES: Release[] = [
  { version: "24.0.9", api: "1.43", commit: "fca702d", go: "go1.20.13", built: "2024-01-31T22:48:45.000000000+00:00", containerd: ["1.6.28", "ae07eda36dd25f8a1b98dfbf587313b99c0190bb"], runc: ["1.1.12", "v1.1.12-0-g51d5e94"] },
  { version: "25.0.5", api: "1.44", commit: "e63daec", go: "go1.21.8", built: "2024-03-19T14:21:01.000000000+00:00", containerd: ["1.6.28", "ae07eda36dd25f8a1b98dfbf587313b99c0190bb"], runc: ["1.1.12", "v1.1.12-0-g51d5e94"] },
  { version: "26.1.4", api: "1.45", commit: "de5c9cf", go: "go1.21.11", built: "2024-06-05T11:28:57.000000000+00:00", containerd: ["1.6.33", "d2d58213f83a351ca8f528a95fbd145f5654e957"], runc: ["1.1.12", "v1.1.12-0-g51d5e94"] },
  { version: "27.3.1", api: "1.47", commit: "41ca978", go: "go1.22.7", built: "2024-09-20T11:41:19.000000000+00:00", containerd: ["1.7.22", "7f7fdf5fed64eb6a7caf99b3e12efcf9d60e311c"], runc: ["1.1.14", "v1.1.14-0-g2c9f560"] },
];

export const MIN_API = "1.24";
export const KERNEL = "5.15.0-112-generic";
export const KERNEL_BUILD = "#122-Ubuntu SMP Thu May 23 07:48:21 UTC 2024";
export const OS_NAME = "Ubuntu 22.04.4 LTS";

export function release(version: string): Release {
  const exact = RELEASES.find((r) => r.version === version);
  if (exact) return exact;
  const major = version.split(".")[0];
  const base = RELEASES.find((r) => r.version.split(".")[0] === major) ?? RELEASES[2]!;
  return { ...base, version };
}

/** Compares dotted API versions ("1.9" < "1.45"). */
export function compareApi(a: string, b: string): number {
  const [am = 0, an = 0] = a.split(".").map(Number);
  const [bm = 0, bn = 0] = b.split(".").map(Number);
  return am - bm || an - bn;
}

/** Headers dockerd's middlewares put on every routed answer. */
export function daemonHeaders(r: Release): Record<string, string> {
  return { "Api-Version": r.api, "Docker-Experimental": "false", Ostype: "linux", Server: `Docker/${r.version} (linux)` };
}

export function versionJson(r: Release): Record<string, unknown> {
  return {
    Platform: { Name: "Docker Engine - Community" },
    Components: [
      { Name: "Engine", Version: r.version, Details: { ApiVersion: r.api, Arch: "amd64", BuildTime: r.built, Experimental: "false", GitCommit: r.commit, GoVersion: r.go, KernelVersion: KERNEL, MinAPIVersion: MIN_API, Os: "linux" } },
      { Name: "containerd", Version: r.containerd[0], Details: { GitCommit: r.containerd[1] } },
      { Name: "runc", Version: r.runc[0], Details: { GitCommit: r.runc[1] } },
      { Name: "docker-init", Version: "0.19.0", Details: { GitCommit: "de40ad0" } },
    ],
    Version: r.version,
    ApiVersion: r.api,
    MinAPIVersion: MIN_API,
    GitCommit: r.commit,
    GoVersion: r.go,
    Os: "linux",
    Arch: "amd64",
    KernelVersion: KERNEL,
    BuildTime: r.built,
  };
}

export interface HostFacts {
  hostname: string;
  /** Stable per pot: dockerd's ID is a UUID kept in /var/lib/docker/engine-id. */
  engineId: string;
  ncpu: number;
  memTotal: number;
  dockerRoot: string;
}

export function infoJson(r: Release, host: HostFacts, counts: { containers: number; running: number; stopped: number; images: number }, port: number): Record<string, unknown> {
  return {
    ID: host.engineId,
    Containers: counts.containers,
    ContainersRunning: counts.running,
    ContainersPaused: 0,
    ContainersStopped: counts.stopped,
    Images: counts.images,
    Driver: "overlay2",
    DriverStatus: [["Backing Filesystem", "extfs"], ["Supports d_type", "true"], ["Using metacopy", "false"], ["Native Overlay Diff", "true"], ["userxattr", "false"]],
    Plugins: {
      Volume: ["local"],
      Network: ["bridge", "host", "ipvlan", "macvlan", "null", "overlay"],
      Authorization: null,
      Log: ["awslogs", "fluentd", "gcplogs", "gelf", "journald", "json-file", "local", "splunk", "syslog"],
    },
    MemoryLimit: true,
    SwapLimit: false,
    CpuCfsPeriod: true,
    CpuCfsQuota: true,
    CPUShares: true,
    CPUSet: true,
    PidsLimit: true,
    IPv4Forwarding: true,
    BridgeNfIptables: true,
    BridgeNfIp6tables: true,
    Debug: false,
    NFd: 33,
    OomKillDisable: false,
    NGoroutines: 47,
    SystemTime: new Date().toISOString().replace("Z", "000000Z"),
    LoggingDriver: "json-file",
    CgroupDriver: "systemd",
    CgroupVersion: "2",
    NEventsListener: 0,
    KernelVersion: KERNEL,
    OperatingSystem: OS_NAME,
    OSVersion: "22.04",
    OSType: "linux",
    Architecture: "x86_64",
    IndexServerAddress: "https://index.docker.io/v1/",
    RegistryConfig: { AllowNondistributableArtifactsCIDRs: null, AllowNondistributableArtifactsHostnames: null, InsecureRegistryCIDRs: ["127.0.0.0/8"], IndexConfigs: { "docker.io": { Name: "docker.io", Mirrors: [], Secure: true, Official: true } }, Mirrors: null },
    NCPU: host.ncpu,
    MemTotal: host.memTotal,
    GenericResources: null,
    DockerRootDir: host.dockerRoot,
    HttpProxy: "",
    HttpsProxy: "",
    NoProxy: "",
    Name: host.hostname,
    Labels: [],
    ExperimentalBuild: false,
    ServerVersion: r.version,
    Runtimes: { "io.containerd.runc.v2": { path: "runc" }, runc: { path: "runc" } },
    DefaultRuntime: "runc",
    Swarm: { NodeID: "", NodeAddr: "", LocalNodeState: "inactive", ControlAvailable: false, Error: "", RemoteManagers: null },
    LiveRestoreEnabled: false,
    Isolation: "",
    InitBinary: "docker-init",
    ContainerdCommit: { ID: r.containerd[1] },
    RuncCommit: { ID: r.runc[1] },
    InitCommit: { ID: "de40ad0" },
    SecurityOptions: ["name=apparmor", "name=seccomp,profile=builtin", "name=cgroupns"],
    CDISpecDirs: ["/etc/cdi", "/var/run/cdi"],
    // What a real daemon on tcp:// without TLS says about itself.
    Warnings: [
      `WARNING: API is accessible on http://0.0.0.0:${port} without encryption.\n         Access to the remote API is equivalent to root access on the host. Refer\n         to the 'Docker daemon attack surface' section in the documentation for\n         more information: https://docs.docker.com/go/attack-surface/`,
    ],
  };
}

/** A hex digest that stays the same for the same input, so an image keeps its id and layers. */
export function digest(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\0")).digest("hex");
}

export interface ImageRef {
  /** As `docker images` shows it: "alpine", "nginx", "ghcr.io/x/y". */
  repo: string;
  tag: string;
  /** The remote path the pull prints: "library/alpine". */
  remote: string;
}

/** Docker's reference grammar, loosely: [registry/]path[:tag][@digest], familiar names for Docker Hub. */
export function parseRef(ref: string, tagParam = ""): ImageRef | null {
  let name = ref.trim();
  if (name === "" || name.length > 255 || /[\s\0]/.test(name)) return null;
  const at = name.indexOf("@");
  if (at >= 0) name = name.slice(0, at);
  let tag = tagParam;
  const colon = name.lastIndexOf(":");
  if (colon > name.lastIndexOf("/")) {
    tag ||= name.slice(colon + 1);
    name = name.slice(0, colon);
  }
  tag ||= "latest";
  if (!/^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$|^[A-Za-z0-9.-]+(:\d+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+$/.test(name)) return null;
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) return null;
  const parts = name.split("/");
  const registry = parts.length > 1 && /[.:]/.test(parts[0]!) || parts[0] === "localhost" ? parts[0]! : "";
  let path = registry ? parts.slice(1).join("/") : name;
  if (registry === "docker.io" || registry === "index.docker.io" || registry === "") {
    if (!path.includes("/")) path = `library/${path}`;
    return { repo: path.replace(/^library\//, ""), tag, remote: path };
  }
  return { repo: `${registry}/${path}`, tag, remote: path };
}

/** Every JSON line `docker pull` reads, as the registry's layers would come down. */
export function pullProgress(ref: ImageRef, present: boolean): Record<string, unknown>[] {
  const shown = `${ref.repo}:${ref.tag}`;
  const lines: Record<string, unknown>[] = [{ status: `Pulling from ${ref.remote}`, id: ref.tag }];
  const d = imageDigest(ref);
  if (!present) {
    for (const layer of imageLayers(ref)) {
      const id = layer.slice(0, 12);
      const total = 1_000_000 + (Number.parseInt(layer.slice(12, 18), 16) % 28_000_000);
      lines.push({ status: "Pulling fs layer", progressDetail: {}, id });
      lines.push({ status: "Downloading", progressDetail: { current: Math.floor(total / 2), total }, progress: progressBar(total / 2, total), id });
      lines.push({ status: "Verifying Checksum", progressDetail: {}, id });
      lines.push({ status: "Download complete", progressDetail: {}, id });
      lines.push({ status: "Extracting", progressDetail: { current: total, total }, progress: progressBar(total, total), id });
      lines.push({ status: "Pull complete", progressDetail: {}, id });
    }
  }
  lines.push({ status: `Digest: sha256:${d}` });
  lines.push({ status: present ? `Status: Image is up to date for ${shown}` : `Status: Downloaded newer image for ${shown}` });
  return lines;
}

function progressBar(current: number, total: number): string {
  const width = 50;
  const done = Math.floor((current / total) * width);
  const bar = done >= width ? "=".repeat(width) : `${"=".repeat(Math.max(done - 1, 0))}>${" ".repeat(width - Math.max(done, 1))}`;
  const mb = (n: number) => `${(n / 1_000_000).toFixed(2)}MB`;
  return `[${bar}]  ${mb(current)}/${mb(total)}`;
}

export function imageDigest(ref: ImageRef): string {
  return digest("manifest", ref.remote, ref.tag);
}

export function imageId(ref: ImageRef): string {
  return digest("config", ref.remote, ref.tag);
}

export function imageLayers(ref: ImageRef): string[] {
  const count = ref.remote === "library/alpine" || ref.remote === "library/busybox" ? 1 : 1 + (Number.parseInt(imageId(ref).slice(0, 2), 16) % 5);
  return Array.from({ length: count }, (_, i) => digest("layer", ref.remote, ref.tag, String(i)));
}

export function imageSize(ref: ImageRef): number {
  if (ref.remote === "library/alpine") return 7_797_760;
  if (ref.remote === "library/busybox") return 4_261_550;
  return 20_000_000 + (Number.parseInt(imageId(ref).slice(0, 6), 16) % 180_000_000);
}

/** The image's own CMD, which a container without one runs. */
export function defaultCmd(ref: ImageRef): string[] {
  const base = ref.remote.split("/").pop() ?? "";
  if (base === "ubuntu" || base === "debian" || base === "centos" || base === "fedora") return ["/bin/bash"];
  if (base === "busybox") return ["sh"];
  if (base === "nginx") return ["nginx", "-g", "daemon off;"];
  if (base === "redis") return ["redis-server"];
  return ["/bin/sh"];
}

const ADJECTIVES = ["admiring", "affectionate", "agitated", "amazing", "angry", "awesome", "blissful", "bold", "brave", "charming", "clever", "compassionate", "competent", "confident", "cool", "dazzling", "determined", "eager", "ecstatic", "elastic", "elegant", "epic", "exciting", "festive", "focused", "friendly", "funny", "gallant", "gifted", "goofy", "gracious", "happy", "hopeful", "hungry", "inspiring", "intelligent", "jolly", "keen", "kind", "laughing", "loving", "lucid", "magical", "modest", "musing", "nervous", "nice", "nifty", "nostalgic", "objective", "optimistic", "peaceful", "pedantic", "pensive", "practical", "quirky", "quizzical", "relaxed", "reverent", "romantic", "serene", "sharp", "silly", "sleepy", "stoic", "strange", "suspicious", "sweet", "tender", "thirsty", "trusting", "upbeat", "vibrant", "vigilant", "wizardly", "wonderful", "youthful", "zealous", "zen"];
const SURNAMES = ["albattani", "allen", "archimedes", "babbage", "banach", "bardeen", "bell", "bhabha", "bohr", "booth", "brattain", "cannon", "carson", "cerf", "chandrasekhar", "curie", "darwin", "davinci", "diffie", "dijkstra", "einstein", "euclid", "euler", "faraday", "fermat", "fermi", "feynman", "franklin", "galileo", "gauss", "goldberg", "goodall", "hamilton", "hawking", "heisenberg", "hellman", "hodgkin", "hopper", "hypatia", "jennings", "kalam", "kepler", "khorana", "knuth", "lamarr", "lamport", "leakey", "lovelace", "lumiere", "mccarthy", "mendel", "meitner", "morse", "napier", "newton", "nobel", "noether", "pascal", "pasteur", "perlman", "pike", "poincare", "ptolemy", "raman", "ritchie", "rosalind", "sammet", "shannon", "shaw", "sinoussi", "stonebraker", "swanson", "tesla", "thompson", "torvalds", "turing", "varahamihira", "visvesvaraya", "wescoff", "wiles", "williams", "wozniak", "wright", "yalow", "yonath"];

/** A name as Docker's namesgenerator makes them ("festive_hopper"). */
export function randomName(random: () => number = Math.random): string {
  const pick = (list: string[]) => list[Math.floor(random() * list.length)]!;
  return `${pick(ADJECTIVES)}_${pick(SURNAMES)}`;
}

/** go-units HumanDuration, which `Up 5 minutes` and `Exited (0) 2 hours ago` are made of. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return "Less than a second";
  if (seconds === 1) return "1 second";
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes === 1) return "About a minute";
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(ms / 3_600_000);
  if (hours === 1) return "About an hour";
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`;
  return `${Math.floor(ms / 3_600_000 / 24 / 365)} years`;
}
