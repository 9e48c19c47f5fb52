/**
 * Artifacts (docs/artifacts.md): files attackers downloaded or uploaded, sent by nodes in
 * chunks (src/core/transfer/file-receiver.ts), kept by SHA-256 with their type and sightings,
 * and handed out only as encrypted zips.
 */
import type { CoreContext, Feature } from "../../core/context";
import { artifactsApi } from "./routes";
import { Artifacts } from "./service";

export { Artifact, ArtifactPage } from "./schemas";
export { Artifacts } from "./service";
export { ZIP_PASSWORD } from "./zip";

export type ArtifactsFeature = Feature & { readonly artifacts: Artifacts };

export function artifactsFeature(ctx: CoreContext): ArtifactsFeature {
  const { config } = ctx;
  const artifacts = new Artifacts({
    dir: ctx.artifactsDir,
    maxBytes: config.artifact_max_bytes,
    retentionDays: config.retention_days,
    store: ctx.stores.artifacts,
    logger: ctx.log.child({ component: "artifacts" }),
  });
  return { name: "artifacts", artifacts, routes: artifactsApi(artifacts, ctx.security), start: () => artifacts.start(), stop: () => artifacts.stop() };
}
