/**
 * Sessions (docs/sessions.md): an attacker's connection with its logins, commands, files and
 * terminal recording. The event writers build them (src/db/session-delta.ts); nodes send the
 * recordings (src/core/transfer/recording-receiver.ts); this feature reads them.
 */
import type { CoreContext, Feature } from "../../core/context";
import type { SaveRecording } from "../../core/transfer/recording-receiver";
import { sessionsApi } from "./routes";

export { toSessionSummary } from "./routes";
export { SessionDetail, SessionPage, SessionSummary } from "./schemas";

export type SessionsFeature = Feature & { readonly saveRecording: SaveRecording };

export function sessionsFeature(ctx: CoreContext): SessionsFeature {
  const { sessions, recordings } = ctx.stores;
  return {
    name: "sessions",
    routes: sessionsApi({ sessions, recordings, geo: ctx.geo, nodes: () => ctx.registry.listNodes() }),
    saveRecording: (node, pot, session, data, sha256) => recordings.save(node, pot, session, data, sha256),
  };
}
