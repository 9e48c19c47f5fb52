/** Starts the docker kind: the Engine API on the shared bounded listener, one fake daemon per pot. */
import type manifest from "../../../catalogue/docker/manifest.json";
import { ConfigError, parseByteCount, parsePort, parsePositiveInt } from "../shared/config.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { listen, listenerBounds } from "../shared/listener.ts";
import { Outbox } from "../shared/outbox.ts";
import { DockerApi } from "./api.ts";
import { Connection } from "./connection.ts";
import { digest, parseRef, release } from "./facts.ts";
import { builtAt, DaemonState } from "./state.ts";

/** A host that has run its two services for a while: images pulled and containers started 19 days ago. */
const SEEDED_AGO_MS = 19 * 24 * 3600 * 1000 + 4 * 3600 * 1000;

export async function startDocker({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const rel = release(config.engine_version);
  const engineId = digest("engine", config.pot_id, config.hostname);
  const host = {
    hostname: config.hostname,
    engineId: `${engineId.slice(0, 8)}-${engineId.slice(8, 12)}-4${engineId.slice(13, 16)}-a${engineId.slice(17, 20)}-${engineId.slice(20, 32)}`,
    ncpu: 8,
    memTotal: 33_605_726_208,
    dockerRoot: "/var/lib/docker",
  };
  const state = new DaemonState(host);
  seed(state, config.images, config.containers);

  const limits = {
    bodyMax: parsePositiveInt("body_max_bytes", config.body_max_bytes),
    uploadMax: parsePositiveInt("upload_max_bytes", config.upload_max_bytes),
  };
  const outbox = new Outbox(process.cwd(), parseByteCount("outbox_max_bytes", config.outbox_max_bytes));
  const port = parsePort("docker_port", config.docker_port);
  // The API's /info names the port it is reached on, known only once bound.
  let api: DockerApi | null = null;
  const listener = await listen(
    { ...listenerBounds(config, logger), name: "docker", port },
    (socket) => {
      if (api) new Connection(socket, { api, sink, outbox, limits, logger });
      else socket.destroy();
    },
  );
  api = new DockerApi(rel, state, host, listener.port);
  return {
    ports: { docker: listener.port },
    async stop() {
      await listener.close();
    },
  };
}

function seed(state: DaemonState, images: string, containers: string): void {
  const past = Date.now() - SEEDED_AGO_MS;
  for (const name of images.split(",").map((s) => s.trim()).filter(Boolean)) {
    const ref = parseRef(name);
    if (!ref) throw new ConfigError(`config key images: "${name}" is not an image reference`);
    state.pull(ref, builtAt(ref, past));
  }
  for (const pair of containers.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [name = "", image = ""] = pair.split("=");
    const ref = parseRef(image);
    if (!ref) throw new ConfigError(`config key containers: "${image}" is not an image reference`);
    state.pull(ref, builtAt(ref, past));
    const c = state.create(
      { image: ref, imageName: image, name, cmd: [], entrypoint: [], env: [], binds: [], mounts: [], privileged: false, networkMode: "bridge", pidMode: "", capAdd: [], user: "", workingDir: "", tty: false, openStdin: false, autoRemove: false },
      past,
    );
    state.start(c);
    c.startedAt = past + 2000;
  }
}
