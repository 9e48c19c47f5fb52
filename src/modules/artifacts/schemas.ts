/** Artifacts' REST shapes (docs/artifacts.md): one schema per shape feeds validation, the types, OpenAPI, the CLI and the console. */
import { Type } from "@sinclair/typebox";
import { NodeId } from "../../protocol/types";

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(s: T) => Type.Union([s, Type.Null()]);

export const ArtifactSighting = Type.Object({
  node_id: NodeId,
  pot_id: nullable(Type.String()),
  source: nullable(Type.String({ description: "How the file arrived: the event that saw it (cowrie.session.file_download, cowrie.session.file_upload, honnypotter.upload)." })),
  session: nullable(Type.String({ description: "The honeypot session (Cowrie's `session`)." })),
  session_id: nullable(
    Type.Integer({ minimum: 1, description: "Core's id of that session (`GET /api/v1/sessions/{id}`); null when the sighting has no session or Core has not stored the session's events yet." }),
  ),
  src_ip: nullable(Type.String({ description: "The attacker's address: that of the session (null without one)." })),
  url: nullable(Type.String({ description: "Where it was fetched from, or the path it was uploaded to." })),
  filename: nullable(Type.String({ description: "The name the attacker gave it." })),
  truncated: Type.Boolean({ description: "The download stopped at the size limit: these are its first bytes only." }),
  seen_at: Type.String({ format: "date-time" }),
});

const example = {
  sha256: "5d41402abc4b2a76b9719d911017c592ae0e7c3b6a8f1d2e0c9b8a7f6e5d4c3b",
  size: 1234,
  mime: "application/x-elf",
  ext: "elf",
  stored: true,
  first_seen: "2026-11-23T04:00:00.000Z",
  last_seen: "2026-11-23T04:00:00.000Z",
  sessions: ["a1b2c3d4e5f6"],
  sources: ["203.0.113.9"],
  urls: ["http://203.0.113.7/bins/x86"],
  filenames: ["x86"],
  sightings: [
    {
      node_id: 18446744073709551557n,
      pot_id: "ssh-01",
      source: "cowrie.session.file_download",
      session: "a1b2c3d4e5f6",
      session_id: 311,
      src_ip: "203.0.113.9",
      url: "http://203.0.113.7/bins/x86",
      filename: "x86",
      truncated: false,
      seen_at: "2026-11-23T04:00:00.000Z",
    },
  ],
};

export const Artifact = Type.Object(
  {
    sha256: Type.String({ description: "SHA-256 of the content, lowercase hex: the artifact's identity." }),
    size: Type.Integer({ description: "Bytes." }),
    mime: nullable(Type.String({ description: "Media type from the magic bytes (file-type; text/x-shellscript for `#!`), null when unknown or not yet stored." })),
    ext: nullable(Type.String({ description: "Usual extension of that type." })),
    stored: Type.Boolean({ description: "The whole file is on Core (false while the node is still sending it)." }),
    first_seen: Type.String({ format: "date-time" }),
    last_seen: Type.String({ format: "date-time" }),
    sessions: Type.Array(Type.String(), { description: "Sessions it was seen in (the honeypots' session ids); how many sessions fetched it is its length." }),
    sources: Type.Array(Type.String(), { description: "Attackers' addresses it came through (those of its sessions); how many sources is its length." }),
    urls: Type.Array(Type.String(), { description: "URLs it was fetched from (or upload paths)." }),
    filenames: Type.Array(Type.String()),
    sightings: Type.Array(ArtifactSighting, { description: "Every time it was seen, oldest first." }),
  },
  { example },
);
export type Artifact = typeof Artifact.static;

export const ArtifactPage = Type.Object(
  {
    artifacts: Type.Array(Artifact, { description: "Last seen first." }),
    next_cursor: nullable(Type.String({ description: "Pass as `cursor` for the next page; null when there is none." })),
  },
  { example: { artifacts: [example], next_cursor: null } },
);
export type ArtifactPage = typeof ArtifactPage.static;
