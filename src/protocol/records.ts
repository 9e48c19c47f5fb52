/**
 * The records Core sends to every reader, one schema each: an event (REST, the live feed, the
 * event log) and a command's record (REST). The schema validates, types the code on both sides
 * of storage (db's stores return these, Core's REST and feed send them) and documents them in
 * OpenAPI with its descriptions and examples.
 */
import { Type as t, type Static, type TAny, type TRecord, type TSchema, type TString } from "@sinclair/typebox";
import { NodeId } from "./types";

export const exampleEvent = {
  id: 1042,
  node_id: 18446744073709551557n,
  pot_id: "cowrie-01",
  pot_type: "cowrie",
  event_type: "cowrie.login.failed",
  timestamp: "2026-11-22T01:07:42.010Z",
  src_ip: "203.0.113.7",
  geo: { country: "CN", asn: 4134, as_org: "Chinanet" },
  data: { session: "61cb4b9d22c9", username: "admin", password: "wrongpw", protocol: "ssh", message: "login attempt [admin/wrongpw] failed" },
};

const nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()]);

export const GeoRecord = t.Object(
  {
    country: nullable(t.String({ description: "ISO 3166-1 alpha-2 country code." })),
    asn: nullable(t.Integer({ minimum: 0, description: "Autonomous system number." })),
    as_org: nullable(t.String({ description: "The autonomous system's organisation." })),
  },
  {
    description:
      "Where the source address is, from offline data: DB-IP Lite and RouteViews/NRO/DB-IP IP-to-ASN by default, or the operator's MaxMind files (`geoip_db`, `asn_db`); see the stats' `geo_attribution`. A field is null where the data does not know it; `geo` is absent when the event has no source address or the data knows nothing of it (private, reserved and documentation ranges such as 10.0.0.0/8 or 203.0.113.0/24).",
  },
);

/**
 * Any object, typed as one. Not a t.Record: Elysia's copy of a response (exact-mirror) assigns
 * a record's keys one by one into `{}`, and a `__proto__` key (attackers' data has them) then
 * sets the copy's prototype instead of being a key; an object schema with additional
 * properties is copied with a spread, which keeps every own key.
 */
const EventData = t.Object({}, { additionalProperties: true, description: "Every field of the event that is not one of the columns above." }) as TSchema as TRecord<TString, TAny>;

export const EventRecord = t.Object(
  {
    id: t.Integer({ minimum: 1, description: "Event id: the order Core committed events in." }),
    node_id: nullable(NodeId),
    pot_id: nullable(t.String({ description: "Honeypot that produced the event." })),
    pot_type: nullable(t.String({ description: "Kind of honeypot (`cowrie`, `honnypotter`, ...)." })),
    event_type: t.String({ description: "Event type, e.g. `cowrie.login.failed` (also when a node sent it as a PotLog); `log.<type>` for a PotLog of a process's output (`log.stderr`), `node.<event>` for NodeEvent." }),
    timestamp: t.String({ description: "Event time, ISO 8601 UTC (the receive time when the event had none)." }),
    src_ip: nullable(t.String({ description: "Attacker's address." })),
    geo: t.Optional(GeoRecord),
    data: EventData,
  },
  { example: exampleEvent },
);
export type EventRecord = Static<typeof EventRecord>;

export const CommandRecord = t.Object(
  {
    command_id: t.String(),
    node_id: NodeId,
    command: t.String({ description: "Command name.", example: "InstallPot" }),
    pot_id: t.Union([t.String(), t.Null()]),
    body: t.Unknown({ description: "The command object as sent to the node." }),
    status: t.Union([t.Literal("issued"), t.Literal("sent"), t.Literal("succeeded"), t.Literal("failed")], {
      description: "issued: recorded; sent: written to the node's connection; succeeded/failed: the node's CommandResult.",
    }),
    message: t.Union([t.String(), t.Null()], {
      description: "The node's message, or why the command failed. A failed InstallPot whose pot the node reported Failed adds how to remove that pot from the registry (`honeybee remove NODE POT`, RemovePot).",
    }),
    data: t.Unknown({ description: "The node's answer as structured data (CommandResult.data): logs, metrics, info, live settings; null when it sent none. docs/protocol.md gives each command's shape." }),
    source: t.String({ description: "Door the command came through: rest or ws.", example: "rest" }),
    principal: t.Union([t.String(), t.Null()], { description: "Who sent it (the API token's name when authentication is on)." }),
    remote_addr: t.Union([t.String(), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  {
    example: {
      command_id: "0b5e7c1e-8f1c-4c55-9f0e-3f2a4d1c9a10",
      node_id: 18446744073709551557n,
      command: "DeployPot",
      pot_id: "ssh-01",
      body: { DeployPot: "ssh-01" },
      status: "succeeded",
      message: "running (pid 4242), listening on ssh 2222",
      data: { pot_id: "ssh-01", pot_type: "cowrie", status: "Running", message: "running (pid 4242), listening on ssh 2222" },
      source: "rest",
      principal: null,
      remote_addr: "127.0.0.1",
      created_at: "2026-11-22T01:07:41.947Z",
      updated_at: "2026-11-22T01:07:42.120Z",
    },
  },
);
export type CommandRecord = Static<typeof CommandRecord>;
export type CommandStatus = CommandRecord["status"];
