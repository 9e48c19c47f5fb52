/**
 * Executes NodeCommands and answers each with CommandResult {command_id, ok, message, data}:
 * query commands (GetPotLogs, GetPotMetrics, ...) put their answer in `data`, in the shapes of
 * src/protocol/command-data.ts.
 *
 * Commands about one pot run one after another in arrival order (an InstallPot followed at
 * once by a DeployPot must not overtake it); commands about different pots run side by side.
 * A command naming a pot that is not installed is answered ok:false and reports no status: a
 * made-up Failed would create a pot in Core's registry that does not exist.
 */
import { existsSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { CatalogueError, loadCatalogue } from "../catalogue/loader";
import type { Logger } from "../log";
import type { InstalledPotsData, LiveSettingsData, PotInfoData, PotLogsData, PotMetricsData, PotStatusData, RemovedPotData, RestartData } from "../protocol/command-data";
import { commandName, type InstallPot, type LiveSettings, type MessageKind, type NodeCommand, type Payload } from "../protocol/messages";
import { chooseSource, fetchCatalogue, CatalogueUnreachable, type FetchedCatalogue } from "./catalogue-fetch";
import { allowedGitUrl } from "./git-allow";
import type { BadCommand } from "./control-link";
import { checkPotId, planInstall, preflight, type TakenPort } from "./installer";
import { runInstall } from "./install-run";
import { groupUsage, tailLines } from "./pot-observe";
import type { PotStore } from "./pot-store";
import { potDir, potRuntime, type NodeContext } from "./pot-runtime";
import { logFiles, readPotManifest, type OpResult, type Supervisor } from "./supervisor";

export interface PotCommandsOptions {
  nodeId: bigint;
  store: PotStore;
  supervisor: Supervisor;
  ctx: NodeContext;
  logsDir: string;
  /** Where git catalogues are cloned for the length of one install. */
  workDir: string;
  catalogue: { catalogue: string; catalogue_branch: string; git_allow: string[] };
  installTimeoutMs: number;
  /** Aborted at node shutdown: running installs are killed and end Failed. */
  signal: AbortSignal;
  logger: Logger;
  send<K extends MessageKind>(kind: K, payload: Payload<K>): boolean;
  /** Events of a pot the relay accepted (GetPotMetrics). */
  relayed(potId: string): number;
  /** The node's live settings (UpdateConfig): apply answers null, or why it refused the change. */
  settings: { current(): LiveSettingsData; apply(change: LiveSettings): string | null };
}

/** GetPotLogs: lines per log file, and the longest line shown, so the answer stays small. */
const LOG_LINES = 100;
const LOG_LINE_CHARS = 1000;

export function createPotCommands(opts: PotCommandsOptions) {
  const { store, supervisor, logger } = opts;
  const queues = new Map<string, Promise<unknown>>();
  const inFlight = new Set<Promise<void>>();

  const serial = (potId: string, op: () => Promise<OpResult>): Promise<OpResult> => {
    const prev = queues.get(potId) ?? Promise.resolve();
    const next = prev.then(op, op);
    const settled = next.catch(() => {});
    queues.set(potId, settled);
    void settled.then(() => {
      if (queues.get(potId) === settled) queues.delete(potId);
    });
    return next;
  };

  const result = (commandId: string | null | undefined, r: OpResult) => {
    if (!commandId) return logger.debug({ ok: r.ok, message: r.message }, "command without command_id finished; no CommandResult sent");
    opts.send("CommandResult", { command_id: commandId, node_id: opts.nodeId, ok: r.ok, message: r.message, ...(r.data !== undefined ? { data: r.data } : {}) });
  };

  const reportStatus = (potId: string) => {
    const record = store.get(potId);
    const s = supervisor.status(potId);
    if (record && s) opts.send("PotStatusUpdate", { node_id: opts.nodeId, pot_id: potId, pot_type: record.pot_type, status: s.status, message: s.message || null });
  };

  const notInstalled = (potId: string): OpResult => {
    const ids = store.list().map((p) => p.pot_id);
    return { ok: false, message: `no pot ${potId} is installed on this node (installed: ${ids.length ? ids.join(", ") : "none"})` };
  };

  const onPot = (potId: string, op: () => Promise<OpResult>) => serial(potId, () => (store.get(potId)?.phase === "installed" ? op() : Promise.resolve(notInstalled(potId))));

  const takenPorts = (except: string): TakenPort[] => {
    const out: TakenPort[] = [];
    for (const r of store.list()) {
      if (r.pot_id === except) continue;
      const manifest = readPotManifest(potDir(opts.ctx, r.pot_id));
      if (typeof manifest === "string") continue;
      const rt = potRuntime(manifest, r.pot_id, r.config, opts.ctx);
      if (rt.ok) for (const p of rt.value.ports) out.push({ potId: r.pot_id, ...p });
    }
    return out;
  };

  const install = async (req: InstallPot): Promise<OpResult> => {
    const refused = preflight(req, (id) => store.get(id));
    if (refused) {
      if (store.get(req.pot_id)) {
        // Reporting Failed here would mark the existing (maybe running) pot as broken in
        // Core's registry; report its true status instead.
        reportStatus(req.pot_id);
      } else {
        supervisor.report(req.pot_id, req.honeypot_type, "Failed", refused);
        supervisor.forget(req.pot_id);
      }
      return { ok: false, message: refused };
    }
    let potType = req.honeypot_type;
    const failed = (message: string): OpResult => {
      supervisor.report(req.pot_id, potType, "Failed", message);
      supervisor.forget(req.pot_id);
      return { ok: false, message };
    };
    // The normalised URL is what gets cloned, so the check and the fetch agree (src/node/git-allow.ts).
    const gitUrl = req.git_url ? allowedGitUrl(req.git_url, opts.catalogue.catalogue, opts.catalogue.git_allow) : undefined;
    if (gitUrl === null) {
      return failed(`git_url ${req.git_url} is not allowed on this node; its operator can add it to git_allow (now: ${opts.catalogue.git_allow.join(", ") || "none"})`);
    }
    const source = chooseSource(opts.catalogue, gitUrl, req.git_branch);
    if (opts.signal.aborted) return failed("the node is shutting down");
    supervisor.report(req.pot_id, potType, "Installing", `installing ${req.honeypot_type} from ${source.location}${source.branch ? `#${source.branch}` : ""}`);
    let fetched: FetchedCatalogue | null = null;
    try {
      fetched = await fetchCatalogue(source, opts.workDir, opts.installTimeoutMs, opts.signal);
      const plan = planInstall(req, loadCatalogue(fetched.dir), opts.ctx, takenPorts(req.pot_id));
      if (!plan.ok) return failed(plan.message);
      potType = plan.value.kind.manifest.name;
      store.put({ pot_id: req.pot_id, pot_type: potType, config: plan.value.config, phase: "installing", desired: "stopped", source: fetched.label, installed_at: new Date().toISOString(), pid: null });
      const logs = logFiles(opts.logsDir, req.pot_id);
      const ran = await runInstall(plan.value, { logFile: logs.install, stepTimeoutMs: opts.installTimeoutMs, signal: opts.signal });
      if (!ran.ok) {
        removePot(req.pot_id);
        return failed(`${ran.message} (install log: ${logs.install})`);
      }
      store.update(req.pot_id, { phase: "installed", desired: plan.value.autoStart ? "running" : "stopped" });
      supervisor.report(req.pot_id, potType, "Stopped", `installed from ${fetched.label}`);
      logger.info({ pot_id: req.pot_id, pot_type: potType, source: fetched.label }, "honeypot installed");
      if (!plan.value.autoStart) return { ok: true, message: `installed ${potType} as ${req.pot_id}` };
      const started = await supervisor.start(req.pot_id);
      return { ok: started.ok, message: `installed ${potType} as ${req.pot_id}; ${started.message}` };
    } catch (e) {
      if (e instanceof CatalogueUnreachable || e instanceof CatalogueError) return failed(e.message);
      logger.error({ pot_id: req.pot_id, err: (e as Error).message }, "install failed");
      if (store.get(req.pot_id)?.phase === "installing") removePot(req.pot_id);
      return failed(`install failed: ${(e as Error).message}`);
    } finally {
      fetched?.cleanup();
    }
  };

  const removePot = (potId: string) => {
    rmSync(potDir(opts.ctx, potId), { recursive: true, force: true });
    store.remove(potId);
  };

  const statusData = (potId: string): PotStatusData => {
    const s = supervisor.status(potId);
    return { pot_id: potId, pot_type: store.get(potId)?.pot_type ?? "unknown", status: s?.status ?? "Stopped", message: s?.message || null };
  };

  const infoData = (potId: string): PotInfoData => {
    const r = store.get(potId)!;
    const s = supervisor.status(potId);
    return { ...statusData(potId), desired: r.desired, pid: s?.pid ?? null, source: r.source, installed_at: r.installed_at };
  };

  /** DeployPot, StopPot, RestartPot: the operation's outcome, with the status it left. */
  const withStatus = async (potId: string, op: () => Promise<OpResult>): Promise<OpResult> => ({ ...(await op()), data: statusData(potId) });

  const statusOf = async (potId: string, detailed: boolean): Promise<OpResult> => {
    reportStatus(potId);
    const data = detailed ? infoData(potId) : statusData(potId);
    return { ok: true, message: `${data.status}${data.message ? `: ${data.message}` : ""}`, data };
  };

  /** A failed install leaves only its install log; it is still worth reading. */
  const logsOf = async (potId: string): Promise<OpResult> => {
    const files = logFiles(opts.logsDir, potId);
    if (!store.get(potId) && !existsSync(dirname(files.install))) return notInstalled(potId);
    const tail = (f: string) => tailLines(f, LOG_LINES, LOG_LINE_CHARS);
    const data: PotLogsData = { pot_id: potId, stdout: tail(files.stdout), stderr: tail(files.stderr), install: tail(files.install) };
    return { ok: true, message: `last lines of ${potId}: ${data.stdout.length} stdout, ${data.stderr.length} stderr, ${data.install.length} install`, data };
  };

  const metricsOf = async (potId: string): Promise<OpResult> => {
    const proc = supervisor.process(potId);
    const usage = proc.pid ? groupUsage(proc.pid) : null;
    const uptime = proc.startedAt ? (Date.now() - proc.startedAt) / 1000 : null;
    const round = (n: number) => Math.round(n * 100) / 100;
    const data: PotMetricsData = {
      pot_id: potId,
      status: supervisor.status(potId)?.status ?? "Stopped",
      pid: proc.pid,
      uptime_s: uptime === null ? null : round(uptime),
      cpu_seconds: usage ? round(usage.cpu_seconds) : null,
      cpu_percent: usage && uptime ? round((100 * usage.cpu_seconds) / uptime) : null,
      rss_bytes: usage?.rss_bytes ?? null,
      processes: usage?.processes ?? null,
      restarts: proc.restarts,
      events_relayed: opts.relayed(potId),
    };
    const mem = data.rss_bytes === null ? "" : `, ${(data.rss_bytes / 1048576).toFixed(1)} MiB resident`;
    return { ok: true, message: `${potId} is ${data.status}${mem}, ${data.restarts} restart(s), ${data.events_relayed} event(s) relayed`, data };
  };

  /** RemovePot: also answers ok for a pot the node does not have, so Core can forget a failed install. */
  const remove = async (potId: string): Promise<OpResult> => {
    const logs = dirname(logFiles(opts.logsDir, potId).install);
    const had = store.get(potId) !== null || existsSync(potDir(opts.ctx, potId)) || existsSync(logs);
    if (store.get(potId)) await supervisor.stop(potId);
    removePot(potId);
    rmSync(logs, { recursive: true, force: true });
    supervisor.forget(potId);
    if (had) logger.info({ pot_id: potId }, "honeypot removed");
    const data: RemovedPotData = { pot_id: potId, removed: had };
    return { ok: true, message: had ? `removed ${potId} and its files` : `no pot ${potId} on this node; nothing to remove`, data };
  };

  const updateConfig = (change: LiveSettings | null): OpResult => {
    const refused = change ? opts.settings.apply(change) : null;
    if (refused) return { ok: false, message: refused, data: opts.settings.current() };
    const data = opts.settings.current();
    const changed = change ? Object.keys(change) : [];
    if (changed.length) logger.info({ changed: change }, "live settings changed");
    return { ok: true, message: changed.length ? `changed ${changed.join(", ")}` : "live settings unchanged", data };
  };

  const run = async (cmd: NodeCommand): Promise<OpResult> => {
    const c = cmd.command as Record<string, unknown>;
    switch (commandName(cmd.command)) {
      case "InstallPot": {
        const req = c.InstallPot as InstallPot;
        return serial(req.pot_id, async () => {
          const r = await install(req);
          return store.get(req.pot_id) ? { ...r, data: statusData(req.pot_id) } : r;
        });
      }
      case "DeployPot":
        return onPot(c.DeployPot as string, () => withStatus(c.DeployPot as string, () => supervisor.start(c.DeployPot as string)));
      case "StopPot":
        return onPot(c.StopPot as string, () => withStatus(c.StopPot as string, () => supervisor.stop(c.StopPot as string)));
      case "RestartPot":
        return onPot(c.RestartPot as string, () => withStatus(c.RestartPot as string, () => supervisor.restart(c.RestartPot as string)));
      case "RemovePot":
        return serial(c.RemovePot as string, () => remove(c.RemovePot as string));
      case "GetPotStatus":
        return onPot(c.GetPotStatus as string, () => statusOf(c.GetPotStatus as string, false));
      case "GetPotInfo":
        return onPot(c.GetPotInfo as string, () => statusOf(c.GetPotInfo as string, true));
      case "GetPotLogs":
        // Not queued behind the pot's other commands: the log of an install under way is what explains a slow one.
        return logsOf(c.GetPotLogs as string);
      case "GetPotMetrics":
        return onPot(c.GetPotMetrics as string, () => metricsOf(c.GetPotMetrics as string));
      case "GetInstalledPots": {
        const pots = store.list().filter((p) => p.phase === "installed");
        for (const p of pots) reportStatus(p.pot_id);
        const data: InstalledPotsData = { pots: pots.map((p) => infoData(p.pot_id)) };
        const list = data.pots.map((p) => `${p.pot_id} (${p.pot_type}, ${p.status})`);
        return { ok: true, message: list.length ? `${list.length} pot(s): ${list.join(", ")}` : "no pots installed", data };
      }
      case "UpdateConfig":
        return updateConfig(c.UpdateConfig as LiveSettings | null);
      case "Restart": {
        const running = store.list().filter((p) => p.phase === "installed" && p.desired === "running");
        const results = await Promise.all(running.map((p) => onPot(p.pot_id, () => supervisor.restart(p.pot_id))));
        const failed = results.flatMap((r, i) => (r.ok ? [] : [{ pot_id: running[i]!.pot_id, message: r.message }]));
        const data: RestartData = { restarted: running.filter((_, i) => results[i]!.ok).map((p) => p.pot_id), failed: failed.map((f) => f.pot_id) };
        return {
          ok: failed.length === 0,
          message: `restarted ${data.restarted.length} of ${running.length} running pot(s)${failed.length ? `: ${failed.map((f) => f.message).join("; ")}` : ""}`,
          data,
        };
      }
    }
  };

  const execute = async (cmd: NodeCommand): Promise<void> => {
    logger.info({ command: commandName(cmd.command), command_id: cmd.command_id }, "command received");
    let r: OpResult;
    try {
      r = await run(cmd);
    } catch (e) {
      logger.error({ err: (e as Error).message, command_id: cmd.command_id }, "command failed");
      r = { ok: false, message: `command failed: ${(e as Error).message}` };
    }
    result(cmd.command_id, r);
  };

  return {
    handle(cmd: NodeCommand): Promise<void> {
      const done = execute(cmd);
      inFlight.add(done);
      void done.finally(() => inFlight.delete(done));
      return done;
    },

    /** Resolves when every command under way has finished (after an abort, promptly). */
    async settle(): Promise<void> {
      await Promise.allSettled([...inFlight]);
    },

    /** A NodeCommand that failed validation: answer it, and report Failed for an InstallPot whose pot_id is unusable. */
    handleBad(bad: BadCommand): void {
      let message = bad.message;
      if (bad.potId && checkPotId(bad.potId)) {
        message = checkPotId(bad.potId)!;
        if (bad.honeypotType) opts.send("PotStatusUpdate", { node_id: opts.nodeId, pot_id: bad.potId, pot_type: bad.honeypotType, status: "Failed", message });
      }
      logger.warn({ command_id: bad.commandId }, `refused a command: ${message}`);
      result(bad.commandId, { ok: false, message });
    },
  };
}
