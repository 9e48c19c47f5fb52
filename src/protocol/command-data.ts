/**
 * The `data` of a CommandResult: what this project's node answers to each query command.
 * Nodes fill it, Core stores it as it came (`GET /api/v1/commands/{id}`), the CLI prints it;
 * docs/protocol.md shows each shape.
 */
import { Type, type Static } from "@sinclair/typebox";
import { LiveSettings } from "./messages";
import { PotStatus } from "./types";

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);

/** GetPotStatus, and the answer of DeployPot, StopPot and RestartPot. */
export const PotStatusData = Type.Object({
  pot_id: Type.String(),
  pot_type: Type.String(),
  status: PotStatus,
  message: Nullable(Type.String()),
});
export type PotStatusData = Static<typeof PotStatusData>;

export const PotInfoData = Type.Object({
  pot_id: Type.String(),
  pot_type: Type.String(),
  status: PotStatus,
  message: Nullable(Type.String()),
  /** What the pot should be doing: it is started again after a node restart when "running". */
  desired: Type.Union([Type.Literal("running"), Type.Literal("stopped")]),
  pid: Type.Union([Type.Integer(), Type.Null()]),
  source: Type.String({ description: "Catalogue the pot was installed from." }),
  installed_at: Type.String({ format: "date-time" }),
});
export type PotInfoData = Static<typeof PotInfoData>;

export const InstalledPotsData = Type.Object({ pots: Type.Array(PotInfoData) });
export type InstalledPotsData = Static<typeof InstalledPotsData>;

/** The last lines of each of a pot's log files, oldest first; a file not written yet is []. */
export const PotLogsData = Type.Object({
  pot_id: Type.String(),
  stdout: Type.Array(Type.String()),
  stderr: Type.Array(Type.String()),
  install: Type.Array(Type.String()),
});
export type PotLogsData = Static<typeof PotLogsData>;

/** Counters since the node agent started; process figures are null while the pot is not running. */
export const PotMetricsData = Type.Object({
  pot_id: Type.String(),
  status: PotStatus,
  pid: Type.Union([Type.Integer(), Type.Null()]),
  uptime_s: Type.Union([Type.Number(), Type.Null()]),
  /** CPU time of the pot's process group (user + system), in seconds. */
  cpu_seconds: Type.Union([Type.Number(), Type.Null()]),
  /** cpu_seconds over uptime: average use of one core since the pot started, in percent. */
  cpu_percent: Type.Union([Type.Number(), Type.Null()]),
  /** Resident memory of the pot's process group. */
  rss_bytes: Type.Union([Type.Integer(), Type.Null()]),
  processes: Type.Union([Type.Integer(), Type.Null()]),
  /** Automatic restarts after the pot exited unexpectedly. */
  restarts: Type.Integer(),
  /** Events of this pot the node's relay accepted and spooled for Core. */
  events_relayed: Type.Integer(),
});
export type PotMetricsData = Static<typeof PotMetricsData>;

export const RemovedPotData = Type.Object({
  pot_id: Type.String(),
  /** false: the node had nothing of this pot (a failed install); Core forgets it all the same. */
  removed: Type.Boolean(),
});
export type RemovedPotData = Static<typeof RemovedPotData>;

/** UpdateConfig's answer: every live setting's value after the change. */
export const LiveSettingsData = Type.Required(LiveSettings);
export type LiveSettingsData = Static<typeof LiveSettingsData>;

export const RestartData = Type.Object({ restarted: Type.Array(Type.String()), failed: Type.Array(Type.String()) });
export type RestartData = Static<typeof RestartData>;
